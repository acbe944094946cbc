// A workflow's definition (seed 003 Workflow, NodeDef, EdgeDef): the one zod schema a workflows/ file and a
// TypeScript workflow are both parsed with, and the error every check of a definition throws. The schema checks each
// value on its own (strict objects: an unknown key is refused with its path); what relates one part to another (the
// graph, the patterns, the conditions) is checked by checkWorkflow (graph.ts), and the agents and MCP servers a
// workflow names by resolveWorkflow (references.ts), once the agents are known.
//
// The seed's names are kept, snake_case. Beyond the seed: `description` (of the workflow and of a node), a tool
// node's `arguments`, a human node's `prompt`, and the settings of the patterns on an agent node.
import { z } from "zod";
import { AGENT_NAME_PATTERN } from "../agents/definition.ts";
import { ConfigError } from "../errors.ts";

/** Seed 003's node types. */
export const NODE_TYPES = ["agent", "tool", "condition", "human"] as const;
export type NodeType = (typeof NODE_TYPES)[number];

/**
 * The patterns an agent node runs (seed 003 `patterns`): `react`, the agent's own tool loop (the default);
 * `reflection`, generate then critique then revise, up to `max_rounds`; `supervisor`, a router agent choosing the next
 * of its `workers` by `routing_key`, up to `max_rounds`. Iteration happens only inside them (the graph is a DAG).
 */
export const PATTERNS = ["react", "reflection", "supervisor"] as const;
export type Pattern = (typeof PATTERNS)[number];

/** The routing_key a supervisor's router answers with to end the pattern (any other value names a worker). */
export const SUPERVISOR_FINISH = "finish";

/** Bounds: a workflow is a handful of steps, not a program; these keep a definition's checks and listing cheap. */
export const MAX_NODES = 100;
export const MAX_EDGES = 500;
export const MAX_ITERATIONS_LIMIT = 1_000;
/** Seed 003's default of `max_iterations`. */
export const DEFAULT_MAX_ITERATIONS = 50;
export const DEFAULT_REFLECTION_ROUNDS = 3;
export const MAX_CONDITION_LENGTH = 1_000;

/** A node's id: a key of `nodes`, named in edges, `entry_point`, `checkpoints` and later in checkpoints' positions. */
export const NODE_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]*$/;

/** "required" for a missing key; zod's own message ("expected string, received number") otherwise. */
const required = (issue: { input: unknown }) => (issue.input === undefined ? "required" : undefined);

const NodeId = z.string({ error: required }).max(64).regex(NODE_ID_PATTERN, `must match ${NODE_ID_PATTERN}`);
const AgentName = z
  .string({ error: required })
  .max(64)
  .regex(AGENT_NAME_PATTERN, `must be an agent name (${AGENT_NAME_PATTERN})`);
const Description = z.string().min(1).max(2_000).optional();
/** A condition in the workflow's expression language (condition.ts), parsed and type-checked by checkWorkflow. */
export const ConditionSource = z.string({ error: required }).min(1, "must not be empty").max(MAX_CONDITION_LENGTH);

/** An agent node: runs agent `agent` in a pattern (seed 003 NodeDef with type "agent"). */
export const AgentNodeSchema = z.strictObject({
  type: z.literal("agent"),
  agent: AgentName,
  description: Description,
  pattern: z.enum(PATTERNS).default("react"),
  /** reflection: the agent that critiques each draft. */
  critic: AgentName.optional(),
  /** reflection: ends the loop early when this condition holds after a critique (e.g. the critic approves). */
  until: ConditionSource.optional(),
  /** supervisor: the agents the router (`agent`) may hand the work to, by routing_key. */
  workers: z.array(AgentName).min(1).max(16).optional(),
  /** reflection (default 3) and supervisor (default: max_iterations): rounds at most; within max_iterations. */
  max_rounds: z.number().int().min(1).max(MAX_ITERATIONS_LIMIT).optional(),
});

/** A tool node: one call of a tool (seed 003 NodeDef with type "tool"), with the arguments it is called with. */
export const ToolNodeSchema = z.strictObject({
  type: z.literal("tool"),
  tool: z.string({ error: required }).min(1).max(200),
  description: Description,
  arguments: z.record(z.string(), z.unknown()).default({}),
});

/** A condition node: does nothing but branch; its outgoing edges carry the conditions, tried in order. */
export const ConditionNodeSchema = z.strictObject({ type: z.literal("condition"), description: Description });

/** A human node: waits for a person (input_required), who approves, rejects or modifies the state. */
export const HumanNodeSchema = z.strictObject({
  type: z.literal("human"),
  description: Description,
  /** What the person is asked. */
  prompt: z.string().min(1).max(10_000).optional(),
});

export const NodeSchema = z.discriminatedUnion("type", [
  AgentNodeSchema,
  ToolNodeSchema,
  ConditionNodeSchema,
  HumanNodeSchema,
]);

/** Seed 003 EdgeDef: from one node to another, under a condition (only on the edges leaving a condition node). */
export const EdgeSchema = z.strictObject({
  from: NodeId,
  to: NodeId,
  condition: ConditionSource.optional(),
});

export const WorkflowDefinitionSchema = z.strictObject({
  /** Seed 003 rule 2's form, like an agent's name: it is a path segment (GET /v1/workflows/:name). */
  name: z
    .string({ error: required })
    .max(64)
    .regex(AGENT_NAME_PATTERN, `must match ${AGENT_NAME_PATTERN} (lowercase, digits, _)`),
  description: Description,
  /** The patterns the workflow's agent nodes run, each once (checkWorkflow holds the list to the nodes). */
  patterns: z.array(z.enum(PATTERNS), { error: required }).max(PATTERNS.length),
  nodes: z
    .record(NodeId, NodeSchema, { error: required })
    .refine((nodes) => Object.keys(nodes).length > 0, "must hold at least one node")
    .refine((nodes) => Object.keys(nodes).length <= MAX_NODES, `must hold at most ${MAX_NODES} nodes`),
  edges: z.array(EdgeSchema, { error: required }).max(MAX_EDGES),
  entry_point: NodeId,
  /** Nodes before which a run waits for a person (seed 003: nodes that support HITL). */
  checkpoints: z.array(NodeId).max(MAX_NODES).default([]),
  /** Seed 003: the global iteration limit (node executions and pattern rounds together). */
  max_iterations: z.number().int().min(1).max(MAX_ITERATIONS_LIMIT).default(DEFAULT_MAX_ITERATIONS),
});

/** A workflow as written (defaults optional). */
export type WorkflowInput = z.input<typeof WorkflowDefinitionSchema>;
/** A parsed workflow definition, defaults applied. */
export type WorkflowDefinition = z.output<typeof WorkflowDefinitionSchema>;
export type WorkflowNode = WorkflowDefinition["nodes"][string];
export type AgentNode = z.output<typeof AgentNodeSchema>;
export type ToolNode = z.output<typeof ToolNodeSchema>;
export type WorkflowEdge = z.output<typeof EdgeSchema>;

/**
 * A workflow that fails a check: `keys` is the path of the key at fault in the definition (a file's error names its
 * line from it), and the message names the node or edge.
 */
export class WorkflowDefinitionError extends ConfigError {
  readonly workflow: string;
  readonly keys: readonly PropertyKey[];
  readonly detail: string;

  constructor(workflow: string, keys: readonly PropertyKey[], detail: string) {
    super(`Workflow "${workflow}": ${keys.length > 0 ? `${keys.map(String).join(".")}: ` : ""}${detail}`);
    this.workflow = workflow;
    this.keys = keys;
    this.detail = detail;
  }
}

/** Parses `input` with the schema; the first issue is a WorkflowDefinitionError at its key. */
export function parseDefinition(input: unknown): WorkflowDefinition {
  const parsed = WorkflowDefinitionSchema.safeParse(input);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const at = issue?.path ?? [];
  const unknownKey = issue?.code === "unrecognized_keys";
  const keys = unknownKey ? [...at, issue.keys[0] ?? ""] : at;
  const message = unknownKey
    ? "unknown key"
    : (nodeTypeMessage(issue) ??
      (issue?.code === "invalid_key" ? issue.issues[0]?.message : issue?.message) ??
      "invalid");
  const name = (input as { name?: unknown } | null)?.name;
  throw new WorkflowDefinitionError(typeof name === "string" ? name : "(unnamed)", keys, message);
}

/** zod's message for a node whose `type` is none of the four, in the workflow's terms. */
function nodeTypeMessage(issue: z.core.$ZodIssue | undefined): string | undefined {
  if (issue?.code !== "invalid_union" || issue.path[0] !== "nodes" || issue.path.at(-1) !== "type") return undefined;
  return `unknown node type; a node is one of ${NODE_TYPES.join(", ")}`;
}
