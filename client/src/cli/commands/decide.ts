// `outpost approve | reject | answer <task>`: a person's decision on what the task waits for, bound to the request
// id its pending_input shows (or the one --request names: if the task waits for another by then, Outpost answers
// 409 pending_input_changed and nothing is decided). POST /v1/tasks/:id/resume, docs/human-in-the-loop.md.
import type { Context } from "../context.ts";
import { CliError, EXIT, type ExitCode } from "../exit-codes.ts";
import { followTask } from "../follow.ts";
import { type Decision, describeRequest, sendDecision } from "../pending-input.ts";

export type Verb = "approve" | "reject" | "answer";

export interface DecideOptions {
  message?: string;
  /** approve: run the call with this input instead (action modify), as JSON. */
  input?: string;
  request?: string;
  wait: boolean;
}

export async function decideCommand(
  ctx: Context,
  verb: Verb,
  id: string,
  answer: string | undefined,
  options: DecideOptions,
): Promise<ExitCode> {
  const { client, out } = ctx;
  const task = await client.tasks.get(id);
  const pending = task.pending_input;
  if (task.status !== "input_required" || !pending) {
    throw new CliError("task_not_waiting", `Task ${id} waits for nobody (status ${task.status}).`, EXIT.api);
  }
  if (verb === "answer" && pending.kind !== "question") {
    throw new CliError(
      "not_a_question",
      `Task ${id} waits for an approval, not an answer: ${describeRequest(pending)} (use approve or reject).`,
      EXIT.usage,
    );
  }
  const decision = decisionFor(verb, answer, options);
  const answered = await sendDecision(ctx, { kind: "task", id }, options.request ?? pending.request_id, decision);
  if (options.wait) {
    if (!out.json) out.note(out.styleErr("dim", `${pastTense(verb, decision)} (request ${pending.request_id})`));
    return followTask(ctx, id, { after: task.last_event_seq });
  }
  if (out.json) out.jsonLine(answered);
  else {
    const what = pending.kind === "question" ? "the question" : String(pending.tool_name);
    out.line(`${out.style("green", "✓")} ${pastTense(verb, decision)} ${what} (request ${pending.request_id})`);
    out.note(out.styleErr("dim", `follow it: outpost watch ${id}`));
  }
  return EXIT.ok;
}

function decisionFor(verb: Verb, answer: string | undefined, options: DecideOptions): Decision {
  const message = answer ?? options.message;
  if (verb === "reject") return message === undefined ? { action: "reject" } : { action: "reject", message };
  if (verb === "answer") {
    if (message === undefined || message.trim() === "") {
      throw new CliError("missing_answer", "Give the answer: outpost answer <task> <text>.", EXIT.usage, "answer");
    }
    return { action: "approve", message };
  }
  if (options.input !== undefined) {
    try {
      return { action: "modify", tool_input: JSON.parse(options.input) };
    } catch {
      throw new CliError("invalid_json", "--input must be JSON (the call's new input).", EXIT.usage, "input");
    }
  }
  return message === undefined ? { action: "approve" } : { action: "approve", message };
}

function pastTense(verb: Verb, decision: Decision): string {
  if (decision.action === "modify") return "approved with changes";
  return { approve: "approved", reject: "rejected", answer: "answered" }[verb];
}
