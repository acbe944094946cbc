// The default agent loop, Agent.execute() (seed 000, SC-001, SC-007): a model turn, then the tool calls it asked for,
// until the model answers without tools or the turns run out. Each model turn and each tool call is a durable step,
// so a replay never repeats one; a checkpoint after each turn and after each turn's calls lets a task fork there.
import type {
  Message,
  MessageCreateParamsBase,
  MessageParam,
  ToolResultBlockParam,
  ToolUseBlock,
  ToolUseBlockParam,
} from "@anthropic-ai/sdk/resources/messages";
import type { StepInfo } from "../contracts/runtime.ts";
import type { ToolResult } from "../contracts/tool-result.ts";
import { LimitExceededError, StructuredOutputError } from "../errors.ts";
import type { JsonObject } from "../lib/json.ts";
import type { AgentContext } from "./context.ts";
import { ContextWindow, promptTooLong, type WindowSettings } from "./context-window.ts";
import { dryRunResult, toParams } from "./model-request.ts";
import { type AgentResult, failureResult, successResult } from "./result.ts";
import { checkAnswer, reaskMessage } from "./structured-output.ts";
import { extractText } from "./text.ts";

/** What the loop asks of its agent (Agent's methods, which a subclass may override). */
export interface ToolLoopSteps {
  /** The request of a model turn over `messages`: what a dry run saves. */
  request(messages: MessageParam[]): MessageCreateParamsBase;
  modelTurn(messages: MessageParam[], turnIndex: number, info: StepInfo): Promise<Message>;
  callTool(use: ToolUseBlock, turnIndex: number, info: StepInfo, position: number): Promise<ToolResult>;
  /** Seed 004 response_format: the final answer must conform to this JSON Schema (src/agents/structured-output.ts). */
  responseFormat?: JsonObject;
  /** The model's window and the agent's compaction marks (src/agents/context-window.ts); absent: no compaction. */
  window?: WindowSettings;
}

export async function runToolLoop(context: AgentContext, steps: ToolLoopSteps): Promise<AgentResult> {
  const { runtime } = context;
  const start = context.startFrom;
  const messages: MessageParam[] = start ? [...start.messages] : [{ role: "user", content: context.input }];
  if (!start) runtime.recordMessage(0, messages[0] as MessageParam);
  let turn = start?.turn ?? 0;
  if (context.dryRun) return dryRunResult(context, steps.request(messages));
  runtime.checkpoint("start", messages.at(-1)?.role === "assistant" ? "tool_calls" : "model_turn", { turn });
  // A fork of a checkpoint taken between a model turn and its tool calls runs those calls first.
  const pending = messages.at(-1);
  if (pending?.role === "assistant" && Array.isArray(pending.content)) {
    const uses = pending.content.filter((b): b is ToolUseBlockParam => b.type === "tool_use");
    if (uses.length > 0) await runToolCalls(context, steps, messages, uses, turn);
  }
  const window = steps.window ? new ContextWindow(context, steps.window, messages) : null;
  const sent = () => (window ? window.messages(messages) : messages);
  const maxTurns = context.config.limits.maxTurns;
  const lastTurn = (start?.countTurnsFrom ?? 0) + maxTurns;
  // A mismatched structured answer is asked for again once; a replay takes the same branch from the same replies.
  let reasked = false;
  while (turn < lastTurn) {
    turn++;
    const current = turn;
    await window?.beforeTurn(messages, current, (m) => steps.request(m));
    const call = () =>
      runtime.step(`turn_${current}_model`, (info) => steps.modelTurn(sent(), current, info), {
        providerRetries: true,
      });
    let reply: Message;
    try {
      reply = await call();
    } catch (error) {
      // A prompt the provider refused as too long: one compaction, and the call again.
      if (!window || !promptTooLong(error) || !(await window.afterTooLong(messages, current, error, steps.request))) {
        throw error;
      }
      reply = await call();
    }
    window?.observe(reply, sent());
    messages.push({ role: "assistant", content: toParams(reply.content) });
    runtime.recordMessage(messages.length - 1, messages[messages.length - 1] as MessageParam);
    // The API paused a long turn (its server tools, web search, ran long): the reply goes back as it is, and the
    // next call continues it. Not a client tool call, and not the end of the run.
    if (reply.stop_reason === "pause_turn") {
      runtime.checkpoint(`turn_${current}_model`, "model_turn", { turn: current });
      continue;
    }
    // Only tool_use blocks are Outpost's to run; a server_tool_use (web search) already ran inside the call.
    const uses = reply.content.filter((block): block is ToolUseBlock => block.type === "tool_use");
    if (uses.length === 0) {
      const text = extractText(reply.content);
      const meta = { turns: current, stop_reason: reply.stop_reason };
      const check = steps.responseFormat ? checkAnswer(steps.responseFormat, text) : null;
      if (check && !check.ok && !reasked) {
        reasked = true;
        messages.push({ role: "user", content: reaskMessage(check.errors) });
        runtime.recordMessage(messages.length - 1, messages[messages.length - 1] as MessageParam);
        runtime.checkpoint(`turn_${current}_model`, "model_turn", { turn: current });
        continue;
      }
      runtime.checkpoint(`turn_${current}_model`, "finish", { turn: current });
      window?.remember(messages);
      if (check && !check.ok) {
        const error = new StructuredOutputError(
          `The answer does not conform to the agent's response_format, also when asked again: ${check.errors.join("; ")}`,
        );
        return failureResult([error], runtime.usage(), meta, text);
      }
      return successResult(text, runtime.usage(), check?.ok ? { ...meta, structured_output: check.value } : meta);
    }
    runtime.checkpoint(`turn_${current}_model`, "tool_calls", { turn: current });
    await runToolCalls(context, steps, messages, uses, current);
  }
  window?.remember(messages);
  return failureResult(
    [
      new LimitExceededError(
        "max_turns",
        `max_turns limit reached (${maxTurns} model turns); raise the task's max_turns or the agent's maxTurns.`,
      ),
    ],
    runtime.usage(),
    { turns: lastTurn },
  );
}

/**
 * Runs a turn's tool calls, each a durable step, then records their results and a checkpoint. Calls run in the
 * turn's order, except that consecutive read-only calls (Toolbox.readOnly) run together: a call that may change
 * something never runs beside another call, and every call sees what the calls before it wrote.
 */
async function runToolCalls(
  context: AgentContext,
  steps: ToolLoopSteps,
  messages: MessageParam[],
  uses: readonly (ToolUseBlock | ToolUseBlockParam)[],
  turn: number,
): Promise<void> {
  const { runtime } = context;
  await context.tools.prepare(uses);
  const call = (use: ToolUseBlock | ToolUseBlockParam, index: number) => {
    const block = { ...use, type: "tool_use" } as ToolUseBlock;
    return runtime.step(`turn_${turn}_tool_${use.id}`, (info) => steps.callTool(block, turn, info, index + 1));
  };
  const answers: ToolResult[] = [];
  for (const group of callGroups(uses, (use) => context.tools.readOnly(use))) {
    if (group.length === 1) {
      const [index] = group as [number];
      answers[index] = await call(uses[index] as ToolUseBlock, index);
      continue;
    }
    // Every read ends before the run goes on, even when one throws (a cancel): none is left running unwatched.
    const settled = await Promise.allSettled(group.map((index) => call(uses[index] as ToolUseBlock, index)));
    for (const [i, outcome] of settled.entries()) {
      if (outcome.status === "rejected") throw outcome.reason;
      answers[group[i] as number] = outcome.value;
    }
  }
  const results: ToolResultBlockParam[] = uses.map((use, index) => {
    const result = answers[index] as ToolResult;
    return { type: "tool_result", tool_use_id: use.id, content: result.content, is_error: result.is_error };
  });
  // Tool results come first in the user turn; what a reviewer added at a resume follows them.
  const human = context.tools.humanMessages(uses.map((use) => use.id));
  messages.push({ role: "user", content: [...results, ...human] });
  runtime.recordMessage(messages.length - 1, messages[messages.length - 1] as MessageParam);
  runtime.checkpoint(`turn_${turn}_tools`, "model_turn", { turn });
}

/**
 * The turn's calls (by index) in the groups they run in: each run of consecutive read-only calls is one group, any
 * other call a group of its own.
 */
export function callGroups<T>(uses: readonly T[], readOnly: (use: T) => boolean): number[][] {
  const groups: number[][] = [];
  let reads: number[] = [];
  for (const [index, use] of uses.entries()) {
    if (readOnly(use)) {
      reads.push(index);
      continue;
    }
    if (reads.length > 0) groups.push(reads);
    reads = [];
    groups.push([index]);
  }
  if (reads.length > 0) groups.push(reads);
  return groups;
}
