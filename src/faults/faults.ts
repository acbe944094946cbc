// Fault injection (issue 17 §2): what a test case (or a task, POST /v1/tasks `faults`) may ask to go wrong in its
// run, and the operator's switch that allows it. The faults are the ones the test suite injects: the object reset
// after a step (as an eviction or a deploy does), a model call that answers 429 or 529 or whose stream breaks or
// turns to garbage, an MCP server that is down or never answers, a client that drops its stream. They are injected
// inside Outpost (src/faults/fault-injector.ts) at the lowest layer that would see the real fault: the model's HTTP
// responses under the provider's SDK, the MCP client's fetch, the object itself; so the retries and recoveries they
// exercise are the production ones. Off unless OUTPOST_FAULT_INJECTION names the tenant.
import { z } from "zod";
import { type StateKey, stateKey } from "../lib/state-key.ts";

export const MODEL_FAULT_KINDS = ["429", "529", "midstream", "malformed"] as const;
export type ModelFaultKind = (typeof MODEL_FAULT_KINDS)[number];
export const MCP_FAULT_KINDS = ["down", "timeout"] as const;
export type McpFaultKind = (typeof MCP_FAULT_KINDS)[number];

/** Most steps or calls a fault may wait for: a run has far fewer. */
const MAX_POSITION = 1_000;

const position = (what: string) =>
  z
    .number(`must be the number of a ${what}`)
    .int(`must be the number of a ${what}`)
    .min(1, "must be at least 1")
    .max(MAX_POSITION, `must be at most ${MAX_POSITION}`);

/** A model fault's kind as written: YAML reads `429` as a number, so both spellings are taken. */
const modelFaultKind = () =>
  z.union(
    [z.enum(MODEL_FAULT_KINDS), z.literal(429), z.literal(529)],
    `must be one of ${MODEL_FAULT_KINDS.join(", ")}`,
  );

export interface ModelFault {
  kind: ModelFaultKind;
  /** The model call it strikes, from 1 (its first attempt; the retries that follow are not faulted). */
  call: number;
}

export interface McpFault {
  /** The agent's MCP server, by name. */
  server: string;
  kind: McpFaultKind;
}

/** A model fault as written: its kind alone (on the first call), or {kind, call}; 429 and 529 also as numbers. */
export type ModelFaultSpec =
  | ModelFaultKind
  | 429
  | 529
  | { kind: ModelFaultKind | 429 | 529; call?: number | undefined };

export interface Faults {
  /** The object is reset right after its nth checkpoint is saved (1: the run's start), once. */
  evict_after_step?: number | undefined;
  model_fault?: ModelFaultSpec | undefined;
  /** Every tool call to the server fails: refused (`down`) or unanswered until its timeout (`timeout`). */
  mcp_fault?: McpFault | undefined;
  /**
   * Every client stream of the run is closed by the server mid-run (after its second checkpoint), as a deploy or a
   * proxy's timeout does; a client reconnects with Last-Event-ID (an evaluation checks it gets every later event).
   */
  drop_client?: boolean | undefined;
}

/** A case's or a task's `faults`: at least one. */
export const FaultsSchema = z
  .strictObject({
    evict_after_step: position("step").optional(),
    model_fault: z
      .union(
        [modelFaultKind(), z.strictObject({ kind: modelFaultKind(), call: position("model call").optional() })],
        `must be one of ${MODEL_FAULT_KINDS.join(", ")}, or {kind, call}`,
      )
      .optional(),
    mcp_fault: z
      .strictObject({
        server: z.string("must be the name of one of the agent's MCP servers").min(1, "must not be empty"),
        kind: z.enum(MCP_FAULT_KINDS, `must be one of ${MCP_FAULT_KINDS.join(", ")}`),
      })
      .optional(),
    drop_client: z.boolean("must be true or false").optional(),
  })
  .refine(
    (f) =>
      f.evict_after_step !== undefined ||
      f.model_fault !== undefined ||
      f.mcp_fault !== undefined ||
      f.drop_client === true,
    "must ask for at least one fault",
  ) satisfies z.ZodType<Faults, unknown>;

/** The model fault a spec asks for, spelled one way. */
export function modelFaultOf(spec: ModelFaultSpec): ModelFault {
  const kind = typeof spec === "object" ? spec.kind : spec;
  return {
    kind: typeof kind === "number" ? (String(kind) as ModelFaultKind) : kind,
    call: typeof spec === "object" ? (spec.call ?? 1) : 1,
  };
}

/** What the fault_injected event says. */
export interface FaultInjected {
  fault: "model_fault" | "mcp_fault" | "evict_after_step" | "drop_client";
  kind: string;
  /** The model call struck (model_fault), else null. */
  call: number | null;
  /** The checkpoint after which the object was reset (evict_after_step) or its clients dropped, else null. */
  step: number | null;
  /** The MCP server and tool whose call failed (mcp_fault), else null. */
  server: string | null;
  tool: string | null;
}

export interface FaultState {
  faults: Faults;
  /** When each fault fired (ISO time): a fault is recorded as fired before it is injected. */
  fired: { model_fault?: string; evict_after_step?: string; drop_client?: string };
}

export const FaultStateSchema = z.lazy(() =>
  z.object({
    // As the task's request was checked (FaultsSchema) when it was created.
    faults: FaultsSchema,
    fired: z.object({
      model_fault: z.string().exactOptional(),
      evict_after_step: z.string().exactOptional(),
      drop_client: z.string().exactOptional(),
    }),
  }),
) satisfies z.ZodType<FaultState, unknown>;

/** The faults a task's run injects, and those already injected (each fires once, whatever evictions follow). */
export const FAULT_STATE_KEY: StateKey<FaultState> = stateKey("faults", FaultStateSchema);

/**
 * Whether the operator allows `tenant`'s runs to inject faults. OUTPOST_FAULT_INJECTION: unset, empty or "off" for
 * nobody (the default); "on" or "*" for every tenant; else a comma-separated list of tenants (a staging tenant, say).
 */
export function faultInjectionAllowed(setting: string | undefined, tenant: string): boolean {
  const value = setting?.trim() ?? "";
  if (value === "" || value === "off") return false;
  if (value === "on" || value === "*") return true;
  return value
    .split(",")
    .map((t) => t.trim())
    .includes(tenant);
}

/** Why a request that asks for faults is refused when they are off, for its 403. */
export function faultInjectionOffMessage(tenant: string): string {
  return (
    `Fault injection is off for tenant "${tenant}": the operator turns it on with OUTPOST_FAULT_INJECTION ` +
    `("on", or a comma-separated list of tenants).`
  );
}
