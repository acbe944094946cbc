// A request that waits for a person (a task's or a session's pending_input, docs/human-in-the-loop.md): how it is
// shown, how it is asked on a terminal (@clack/prompts), how the answer is sent (POST …/resume bound to the request
// id read from pending_input, so an answer never applies to a request the person did not see), and what is printed
// instead when nobody can be asked here.
import { cancel, confirm, isCancel, text } from "@clack/prompts";
import { OutpostError, type PendingInput } from "../index.ts";
import type { Context } from "./context.ts";
import { CommandExit, EXIT } from "./exit-codes.ts";
import { short } from "./output.ts";

export type Decision =
  | { action: "approve"; message?: string }
  | { action: "reject"; message?: string }
  | { action: "modify"; tool_input: unknown };

/** What a task or a session is answered through. */
export interface Waiter {
  kind: "task" | "session";
  id: string;
}

/** One line saying what is asked. */
export function describeRequest(pending: PendingInput): string {
  const tool = String(pending.tool_name ?? "a tool");
  const who = typeof pending.task_id === "string" ? ` (sub-agent task ${pending.task_id})` : "";
  if (pending.kind === "question") return `The agent asks${who}: ${String(pending.question ?? "")}`;
  return `${tool} waits for approval${who}: ${short(pending.input, 200)}`;
}

/** How to answer from a shell (what `run` prints when it cannot ask). */
export function answerHints(waiter: Waiter, pending: PendingInput): string[] {
  if (waiter.kind === "session") {
    return [`Answer with POST /v1/sessions/${waiter.id}/resume (request_id ${pending.request_id}).`];
  }
  const id = waiter.id;
  const hints =
    pending.kind === "question"
      ? [`outpost answer ${id} "<your answer>"`, `outpost reject ${id}`]
      : [`outpost approve ${id}`, `outpost reject ${id} --message "<why>"`];
  return [...hints.map((hint) => `  ${hint}`), `then follow it with: outpost watch ${id}`];
}

/**
 * Asks the person at the terminal; undefined when they chose not to answer now (Ctrl-C / Escape), which leaves the
 * request waiting.
 */
export async function ask(pending: PendingInput): Promise<Decision | undefined> {
  if (pending.kind === "question") {
    const answer = await text({ message: String(pending.question ?? "The agent asks a question"), placeholder: "" });
    if (isCancel(answer)) return leave();
    return { action: "approve", message: answer };
  }
  const approved = await confirm({ message: `Run ${String(pending.tool_name)}?` });
  if (isCancel(approved)) return leave();
  if (approved) return { action: "approve" };
  const reason = await text({ message: "Why not? (told to the model; optional)", placeholder: "" });
  if (isCancel(reason)) return leave();
  return reason.trim() === "" ? { action: "reject" } : { action: "reject", message: reason };
}

function leave(): undefined {
  cancel("Left waiting.");
  return undefined;
}

/**
 * Sends the decision for this very request. A request that changed or was decided meanwhile (someone else
 * answered) is not an error here: the caller reads the task again and goes on.
 */
export async function sendDecision(
  ctx: Context,
  waiter: Waiter,
  requestId: string,
  decision: Decision,
  options: { tolerateRaces?: boolean } = {},
): Promise<unknown> {
  const path = `/v1/${waiter.kind === "task" ? "tasks" : "sessions"}/${encodeURIComponent(waiter.id)}/resume`;
  try {
    return await ctx.client.request("POST", path, { body: { request_id: requestId, ...decision } });
  } catch (error) {
    const raced =
      error instanceof OutpostError &&
      ["pending_input_changed", "already_decided", "task_not_waiting"].includes(error.code);
    if (!options.tolerateRaces || !raced) throw error;
    ctx.out.note(ctx.out.styleErr("yellow", `! ${error.message}`));
    return undefined;
  }
}

/**
 * What a follower does when the task (or session) it follows waits for a person: asks here and sends the answer, or,
 * when nobody can be asked here (no terminal, --json, or the person chose to leave it), prints the request (the
 * view itself with --json) and how to answer it, and ends the command with EXIT.waiting.
 */
export async function answerOrLeave(
  ctx: Context,
  waiter: Waiter,
  pending: PendingInput,
  view: unknown,
  options: { ask?: boolean } = {},
): Promise<void> {
  const { out } = ctx;
  if (options.ask === false || !out.canAsk) {
    if (out.json) out.jsonLine(view);
    else out.note(out.styleErr("yellow", describeRequest(pending)));
    out.note(`${waiter.kind === "task" ? "Task" : "Session"} ${waiter.id} waits for a person. Answer it with:`);
    for (const hint of answerHints(waiter, pending)) out.note(hint);
    throw new CommandExit(EXIT.waiting);
  }
  out.line(out.style("yellow", describeRequest(pending)));
  const decision = await ask(pending);
  if (decision === undefined) {
    for (const hint of answerHints(waiter, pending)) out.note(hint);
    throw new CommandExit(EXIT.waiting);
  }
  await sendDecision(ctx, waiter, pending.request_id, decision, { tolerateRaces: true });
}
