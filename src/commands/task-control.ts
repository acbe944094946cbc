// The commands that act on a task or a session that exists: cancel it, answer what it waits for, send a session a
// message. Each finds the object within the principal's tenant (another tenant's id reaches an empty object), checks
// the principal's scope, and asks the object, which judges the rest (a stale decision, a finished task, a busy
// session). null means no such task or session here: each way in answers that in its own words.
import type { DecisionInput } from "../approvals/requests.ts";
import type { DecisionFailure } from "../approvals/resume.ts";
import type { RpcFailure } from "../contracts/rpc.ts";
import { unhandledCode } from "../errors/codes.ts";
import { ApiError } from "../errors.ts";
import { taskStubFor } from "../tasks/task-ids.ts";
import type { CommandContext } from "./context.ts";
import { readableRefusal } from "./decisions.ts";
import { requireScope } from "./principal.ts";
import { requireCreationToken } from "./rate.ts";
import { checkInput } from "./runs.ts";

type TaskStub = ReturnType<typeof taskStubFor>;

/** The object of task (or session) `id` within the principal's tenant. */
export function tenantObject(ctx: Pick<CommandContext, "env" | "principal">, id: string): TaskStub {
  return taskStubFor(ctx.env, ctx.principal.tenant, id);
}

/** Cancels the task; 409 task_already_finished once it has ended. */
export async function cancelTask(ctx: CommandContext, id: string) {
  requireScope(ctx.principal, "run");
  const { value, error } = await tenantObject(ctx, id).cancel();
  if (value) return value;
  switch (error.code) {
    case "task_not_found":
      return null;
    case "task_already_finished":
      throw new ApiError("task_already_finished", error.message);
    default:
      return unhandledCode(error.code);
  }
}

/** What a decision came to: decided (or the original decision, repeated), or refused as the principal may see it. */
export type Decided<T> = { decided: T } | { refused: RpcFailure<DecisionFailure> };

/** Decides what the task waits for (decisionInput made `decision`, bound to the request it names). */
export async function resumeTask(ctx: CommandContext, id: string, decision: DecisionInput) {
  requireScope(ctx.principal, "run");
  const { value, error } = await tenantObject(ctx, id).resume(decision);
  if (value) return { decided: value };
  if (error.code === "task_not_found") return null;
  return { refused: readableRefusal(ctx.principal, { ...error, code: error.code }) };
}

/** Decides what the session's turn waits for. */
export async function resumeSession(ctx: CommandContext, id: string, decision: DecisionInput) {
  requireScope(ctx.principal, "run");
  const { value, error } = await tenantObject(ctx, id).resumeSession(decision);
  if (value) return { decided: value };
  if (error.code === "session_not_found") return null;
  return { refused: readableRefusal(ctx.principal, { ...error, code: error.code }) };
}

/**
 * A message to the session (seed 004 send): it starts a run, as a task's creation does, so it takes a creation token,
 * unless it is the first message of a session opened by the same command (`opened`: MCP's start-session), whose
 * opening took it. Its turn, and with `streaming` the turn's event stream; 409 session_busy or session_closed.
 */
export async function sendSessionMessage(
  ctx: CommandContext,
  id: string,
  message: string,
  options: { streaming: boolean; opened?: boolean },
) {
  requireScope(ctx.principal, "run");
  checkInput(message, "message");
  if (!options.opened) await requireCreationToken(ctx);
  const { streaming } = options;
  const sent = await tenantObject(ctx, id).send(message, { streaming });
  if (sent.ok) return sent.value;
  switch (sent.error.code) {
    case "session_not_found":
      return null;
    case "session_busy":
    case "session_closed":
      throw new ApiError(sent.error.code, sent.error.message);
    default:
      return unhandledCode(sent.error.code);
  }
}
