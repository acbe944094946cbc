// The tool_calls metric: how many of a case's expected tool calls the turn made. A call matches an expected one when
// its name is the same and every argument the expected call gives is among the call's arguments with an equal value
// (JSON equality: key order and 1 vs 1.0 do not matter); other arguments of the call are not looked at. In order, the
// expected calls must appear in the turn's calls as a subsequence (other calls may come between them), and the score
// is the largest such subsequence over the number expected; in any order, each expected call needs a call of its own
// (a maximum bipartite matching). `expected_tools: []` expects no call at all.
import type { ExecutionResult } from "../contracts/execution-result.ts";
import { canonicalJson } from "../lib/canonical-json.ts";
import type { ExpectedToolCall } from "./config.ts";

type Call = ExecutionResult["tool_calls"][number];

export interface ToolCallMatch {
  /** Expected calls matched over expected calls (with none expected: 1 when no call was made, else 0). */
  score: number;
  /** The expected calls no call matched, in the case's order. */
  missing: ExpectedToolCall[];
}

/** Whether `call` is what `expected` asks for. */
export function callMatches(expected: ExpectedToolCall, call: Call): boolean {
  if (call.name !== expected.name) return false;
  const given = call.arguments;
  const args = typeof given === "object" && given !== null && !Array.isArray(given) ? given : {};
  return Object.entries(expected.arguments ?? {}).every(
    ([key, value]) => Object.hasOwn(args, key) && canonicalJson(args[key]) === canonicalJson(value),
  );
}

export function matchToolCalls(
  expected: readonly ExpectedToolCall[],
  calls: readonly Call[],
  inOrder: boolean,
): ToolCallMatch {
  if (expected.length === 0) return { score: calls.length === 0 ? 1 : 0, missing: [] };
  const matched = inOrder ? orderedMatch(expected, calls) : unorderedMatch(expected, calls);
  return {
    score: matched.size / expected.length,
    missing: expected.filter((_, index) => !matched.has(index)),
  };
}

/** The indexes of `expected` in a longest subsequence of `calls` that matches them in order (LCS with backtracking). */
function orderedMatch(expected: readonly ExpectedToolCall[], calls: readonly Call[]): Set<number> {
  const rows = expected.length;
  const cols = calls.length;
  // best[i][j]: the most of expected[i..] matched in order within calls[j..].
  const best = Array.from({ length: rows + 1 }, () => new Array<number>(cols + 1).fill(0));
  const at = (i: number, j: number) => best[i]?.[j] ?? 0;
  for (let i = rows - 1; i >= 0; i--) {
    for (let j = cols - 1; j >= 0; j--) {
      const take = callMatches(expected[i] as ExpectedToolCall, calls[j] as Call) ? at(i + 1, j + 1) + 1 : 0;
      (best[i] as number[])[j] = Math.max(take, at(i + 1, j), at(i, j + 1));
    }
  }
  const matched = new Set<number>();
  let i = 0;
  let j = 0;
  while (i < rows && j < cols) {
    if (callMatches(expected[i] as ExpectedToolCall, calls[j] as Call) && at(i, j) === at(i + 1, j + 1) + 1) {
      matched.add(i);
      i++;
      j++;
    } else if (at(i + 1, j) >= at(i, j + 1)) i++;
    else j++;
  }
  return matched;
}

/** The indexes of `expected` matched, each to a call of its own, in a maximum matching (augmenting paths). */
function unorderedMatch(expected: readonly ExpectedToolCall[], calls: readonly Call[]): Set<number> {
  const owner = new Array<number>(calls.length).fill(-1);
  const assign = (e: number, seen: Set<number>): boolean => {
    for (let c = 0; c < calls.length; c++) {
      if (seen.has(c) || !callMatches(expected[e] as ExpectedToolCall, calls[c] as Call)) continue;
      seen.add(c);
      const current = owner[c] ?? -1;
      if (current === -1 || assign(current, seen)) {
        owner[c] = e;
        return true;
      }
    }
    return false;
  };
  for (let e = 0; e < expected.length; e++) assign(e, new Set());
  return new Set(owner.filter((e) => e !== -1));
}

/** A call as a reason names it: `Read {"path":"a.txt"}`. */
export function describeCall(call: ExpectedToolCall): string {
  return call.arguments ? `${call.name} ${canonicalJson(call.arguments)}` : call.name;
}
