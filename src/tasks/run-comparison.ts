// What a replay did differently from the run it replays (GET /v1/tasks/:id/replay, src/tasks/replay.ts): the outcome
// (status, answer), the number of model calls, and per model turn the request sent (system prompt, tools offered),
// the tool calls asked for (name and arguments) and their results. The replay's model answers as the recorded one
// did, so a difference is what the agent's prompt or code changed.
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { Json } from "../lib/json.ts";

/** One side of the comparison: a task as its API shows it, its conversation, and its model requests by turn. */
export interface ComparedRun {
  status: string;
  result: string | null;
  /** The conversation as the API shows it (redacted alike on both sides). */
  messages: readonly MessageParam[];
  /** Each model call's request as its bundle file holds it (turn 1 first), null where the file is missing. */
  requests: readonly (RecordedRequest | null)[];
}

/** What a request file holds that the comparison reads. */
export interface RecordedRequest {
  system?: unknown;
  tools?: readonly { name?: unknown }[];
}

/** The bundle file of a model call's request (turn 1 first), which a side's `requests` are read from. */
export function requestFilePath(turn: number): string {
  return `artifacts/llm/decision_loop_turn_${turn}_attempt_1_request.txt`;
}

/** A request file's text as the comparison reads it: null when it is not a JSON object. */
export function parseRequestFile(text: string): RecordedRequest | null {
  try {
    const value: unknown = JSON.parse(text);
    return value !== null && typeof value === "object" ? (value as RecordedRequest) : null;
  } catch {
    return null;
  }
}

/** What can differ between two runs. */
export const DIFFERENCE_KINDS = [
  "status",
  "result",
  "model_calls",
  "system_prompt",
  "tools",
  "tool_calls",
  "tool_results",
] as const;

export interface RunDifference {
  what: (typeof DIFFERENCE_KINDS)[number];
  /** The model turn it is in (1 first), or null for the run as a whole. */
  turn: number | null;
  original: Json;
  replay: Json;
}

export function compareRuns(original: ComparedRun, replay: ComparedRun): RunDifference[] {
  const differences: RunDifference[] = [];
  const differ = (what: RunDifference["what"], turn: number | null, a: Json, b: Json) => {
    if (JSON.stringify(a) !== JSON.stringify(b)) differences.push({ what, turn, original: a, replay: b });
  };
  differ("status", null, original.status, replay.status);
  differ("result", null, original.result, replay.result);
  const turnsA = turnsOf(original.messages);
  const turnsB = turnsOf(replay.messages);
  differ("model_calls", null, turnsA.length, turnsB.length);
  for (let i = 0; i < Math.max(turnsA.length, turnsB.length); i++) {
    const a = turnsA[i];
    const b = turnsB[i];
    const requestA = original.requests[i] ?? null;
    const requestB = replay.requests[i] ?? null;
    if (requestA && requestB) {
      differ("system_prompt", i + 1, systemText(requestA.system), systemText(requestB.system));
      differ("tools", i + 1, toolNames(requestA), toolNames(requestB));
    }
    if (a && b) {
      differ("tool_calls", i + 1, a.calls, b.calls);
      differ("tool_results", i + 1, a.results, b.results);
    }
  }
  return differences;
}

/** Each model turn's tool calls (name and arguments) and the results the next user message gave them. */
function turnsOf(messages: readonly MessageParam[]): { calls: Json[]; results: Json[] }[] {
  const turns: { calls: Json[]; results: Json[] }[] = [];
  for (const [index, message] of messages.entries()) {
    if (message.role !== "assistant") continue;
    const blocks = typeof message.content === "string" ? [] : message.content;
    const calls = blocks.flatMap((b) => (b.type === "tool_use" ? [{ name: b.name, input: asJson(b.input) }] : []));
    const next = messages[index + 1];
    const replies = next && next.role === "user" && typeof next.content !== "string" ? next.content : [];
    const results = replies.flatMap((b) =>
      b.type === "tool_result" ? [{ is_error: b.is_error === true, content: asJson(b.content ?? null) }] : [],
    );
    turns.push({ calls, results });
  }
  return turns;
}

/**
 * A request's system prompt as its text: a string as it is, text blocks joined. Requests send it as blocks with a
 * cache breakpoint (src/llm/prompt-cache.ts), bundles recorded before that as a string; the marker is not the prompt.
 */
function systemText(system: unknown): Json {
  if (system === undefined || system === null || typeof system === "string") return system ?? null;
  if (!Array.isArray(system)) return asJson(system);
  return system
    .flatMap((block) => (block?.type === "text" && typeof block.text === "string" ? [block.text] : []))
    .join("\n");
}

function toolNames(request: RecordedRequest): Json {
  return (request.tools ?? []).map((tool) => (typeof tool.name === "string" ? tool.name : null));
}

function asJson(value: unknown): Json {
  return value === undefined ? null : (JSON.parse(JSON.stringify(value)) as Json);
}
