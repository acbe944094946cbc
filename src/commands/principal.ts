// Who a command acts for (issue 36): the tenant, the API key by its id (a key listed without one is known by the id its
// hash gives it, src/tenants/api-keys.ts), the key's scopes, the way in the command came through, the root task when
// the work is inside a tree, and the creation bucket its tasks take tokens from. Every command of src/commands/
// checks what it does against the principal it is given, whichever adapter built it: a request's key (/v1, A2A, MCP),
// a hook's delivery, the key a schedule or an evaluation was made with (read again at each run, src/commands/
// stored-work.ts), or a tree's root (a sub-agent acts as the principal that started its root). What a task keeps of
// it is the TaskPrincipal (src/tasks/principal.ts): its tree's children are checked as that principal.
import type { Env } from "../env.ts";
import { ApiError } from "../errors.ts";
import { creationRatePerMinute } from "../tasks/creation-rate.ts";
import { hookBucket, keyBucket, type TaskPrincipal } from "../tasks/principal.ts";
import { type ApiKey, hasScope, type Scope } from "../tenants/api-keys.ts";

/** The ways in: the adapters over the commands. */
export const ADAPTERS = ["v1", "a2a", "mcp", "hook", "schedule", "evaluation", "subagent"] as const;
export type Adapter = (typeof ADAPTERS)[number];

export interface Principal {
  tenant: string;
  /** The API key's id; null for a hook's delivery (its signature authenticates it). */
  key_id: string | null;
  scopes: readonly Scope[];
  adapter: Adapter;
  /** The root of the tree the work is inside (a sub-agent's); null for work that starts a tree. */
  root_task_id: string | null;
  /** The token bucket its task creations take from: `key:<key id>`, or `hook:<hook id>`. */
  rate_bucket: string;
  /** The bucket's tokens a minute: the key's own, else the deployment's. */
  rate_limit_per_minute: number;
}

/** A key's principal (a request's, or the key stored work runs as) through `adapter`. */
export function keyPrincipal(
  env: Pick<Env, "OUTPOST_RATE_LIMIT_PER_MINUTE">,
  key: Pick<ApiKey, "id" | "tenant" | "scopes" | "rateLimitPerMinute">,
  adapter: Adapter,
): Principal {
  return {
    tenant: key.tenant,
    key_id: key.id,
    scopes: key.scopes,
    adapter,
    root_task_id: null,
    rate_bucket: keyBucket(key.id),
    rate_limit_per_minute: creationRatePerMinute(env, key.rateLimitPerMinute),
  };
}

/** A hook's delivery: it may start the hook's runs (`run`), at the hook's rate, and read nothing. */
export function hookPrincipal(tenant: string, hookId: string, perMinute: number): Principal {
  return {
    tenant,
    key_id: null,
    scopes: ["run"],
    adapter: "hook",
    root_task_id: null,
    rate_bucket: hookBucket(hookId),
    rate_limit_per_minute: perMinute,
  };
}

/**
 * The principal a tree's child is started as: the one its root kept (the key's id, its bucket and rate as they were
 * when the root was created), acting through the sub-agent adapter with the `run` its root was started with.
 */
export function treePrincipal(kept: TaskPrincipal, rootTaskId: string): Principal {
  return { ...kept, scopes: ["run"], adapter: "subagent", root_task_id: rootTaskId };
}

/** What a task keeps of the principal that created it (its tree's children are checked as it). */
export function keptPrincipal(principal: Principal): TaskPrincipal {
  const { tenant, key_id, rate_bucket, rate_limit_per_minute } = principal;
  return { tenant, key_id, rate_bucket, rate_limit_per_minute };
}

/** 403 insufficient_scope unless the principal's scopes include `needed` (`admin` includes everything). */
export function requireScope(principal: Pick<Principal, "scopes">, needed: Scope, field = "authorization"): void {
  if (hasScope(principal.scopes, needed)) return;
  throw new ApiError(
    "insufficient_scope",
    `This API key's scopes (${principal.scopes.join(", ")}) do not include ${needed}.`,
    field,
  );
}

/** Whether the principal may read what it acts on: a task's input, result, what it waits for. */
export function mayRead(principal: Pick<Principal, "scopes">): boolean {
  return hasScope(principal.scopes, "read");
}
