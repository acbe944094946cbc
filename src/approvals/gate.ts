// What the Toolbox asks before it runs a call: does a person have to approve it (the agent's permissions, or a call
// a fork inherited half-done), and if so, what did they decide? An approved call runs, a modified one runs with the
// reviewer's arguments, a rejected one is answered with an is_error result the model can act on, and an undecided
// one stops the run until someone decides. Decisions are stored before the run goes on, so a replay decides alike.
import type { TextBlockParam, ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import type { StepInfo, ToolRuntime } from "../contracts/runtime.ts";
import type { ToolResult } from "../contracts/tool-result.ts";
import type { TypedState } from "../lib/state-key.ts";
import { needsApproval, type ToolPermissions } from "./permissions.ts";
import { decisionKey } from "./requests.ts";
import { waitForPerson } from "./wait.ts";

/** What a call gets past the gate: run it (as sent, or with a reviewer's arguments), or this answer instead. */
export type GateOutcome = { run: ToolUseBlock; rewritten: boolean } | { answer: ToolResult };

/** What a person is told when a fork would run again a call whose outcome in the origin is unknown. */
const UNCERTAIN_REASON =
  "This call was cut short in the task this one was forked from (canceled, failed or crashed during it): it may or " +
  "may not have taken effect there. Approve to run it again, or reject to tell the model it was not run here.";

/**
 * Checks one call of turn `turnIndex`. `uncertain`: the task inherited the call half-done from its fork origin;
 * whatever the agent's permissions, a person decides whether it runs again. Throws (the run waits) while a
 * required decision is missing.
 */
export function gateCall(
  runtime: Pick<ToolRuntime, "taskState" | "emit" | "checkpoint">,
  permissions: ToolPermissions,
  call: { use: ToolUseBlock; turnIndex: number; info: StepInfo; uncertain: boolean },
): GateOutcome {
  const { use, turnIndex, info, uncertain } = call;
  if (!uncertain && !needsApproval(use.name, permissions)) return { run: use, rewritten: false };
  const decision = runtime.taskState.get(decisionKey(use.id));
  if (!decision) {
    waitForPerson(runtime, permissions.timeoutSeconds, {
      kind: "approval",
      use,
      turnIndex,
      question: null,
      ...(uncertain ? { reason: UNCERTAIN_REASON } : {}),
    });
  }
  if (decision.action === "reject") {
    runtime.emit(
      "tool_denied",
      {
        turn_index: turnIndex,
        tool_use_id: use.id,
        tool_name: use.name,
        reason: "rejected_by_reviewer",
        decided_by: decision.decided_by,
      },
      info.spanId,
    );
    const why = decision.message ? `: ${decision.message}` : ".";
    return {
      answer: {
        content: uncertain
          ? `A reviewer chose not to run this call to ${use.name} again${why} It was cut short in the task this one was forked from, so it may or may not have taken effect there.`
          : `A reviewer rejected this call to ${use.name}${why}`,
        is_error: true,
      },
    };
  }
  if (decision.action === "modify" && decision.tool_input) {
    // Other arguments make another call: it must not pass for a repeat of the one first sent (see mcpCallKey).
    return { run: { ...use, input: decision.tool_input }, rewritten: true };
  }
  return { run: use, rewritten: false };
}

/**
 * What people added to the conversation when they answered this turn's calls (resume state_updates.messages),
 * in call order, as text blocks to follow the turn's tool results. Decisions are stored before the run goes on,
 * so a replay adds the same text.
 */
export function humanMessages(state: Pick<TypedState, "get">, toolUseIds: readonly string[]): TextBlockParam[] {
  const blocks: TextBlockParam[] = [];
  for (const id of toolUseIds) {
    const decision = state.get(decisionKey(id));
    for (const message of decision?.state_updates?.messages ?? []) {
      if (typeof message.content === "string") blocks.push({ type: "text", text: message.content });
      else for (const part of message.content) blocks.push({ type: "text", text: part.text });
    }
  }
  return blocks;
}
