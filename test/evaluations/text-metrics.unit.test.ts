// BLEU and ROUGE-L (src/evaluations/text-metrics.ts) on sentences whose scores are worked out by hand from the
// papers' formulas, and the tool_calls metric's matching (src/evaluations/tool-calls.ts): names, order, and the
// subset match of arguments.
import { describe, expect, it } from "vitest";
import { bleu, ROUGE_L_MAX_WORDS, rougeL, tokens } from "../../src/evaluations/text-metrics.ts";
import { callMatches, matchToolCalls } from "../../src/evaluations/tool-calls.ts";

describe("BLEU", () => {
  it("is 1 for a response identical to the reference, whatever its case and punctuation", () => {
    expect(bleu("The cat sat on the mat.", "the cat sat on the mat")).toBe(1);
  });

  it("is the geometric mean of the clipped precisions, smoothed above unigrams", () => {
    // p1 = 5/6 ("the" clipped to 1), p2 = (3+1)/(5+1), p3 = (2+1)/(4+1), p4 = (1+1)/(3+1); equal lengths: BP = 1.
    const expected = ((5 / 6) * (4 / 6) * (3 / 5) * (2 / 4)) ** (1 / 4);
    expect(bleu("the cat sat on the mat", "the cat sat on a mat")).toBeCloseTo(expected, 12);
  });

  it("applies the brevity penalty to a response shorter than the reference", () => {
    // Every precision is 1 (p3 and p4 have no n-grams: (0+1)/(0+1)); BP = exp(1 - 6/2).
    expect(bleu("the cat", "the cat sat on a mat")).toBeCloseTo(Math.exp(-2), 12);
  });

  it("is 0 for a response sharing no word with the reference, and for an empty one", () => {
    expect(bleu("dogs bark loudly", "the cat sat on a mat")).toBe(0);
    expect(bleu("", "the cat sat")).toBe(0);
  });

  it("counts n-grams up to max_n only", () => {
    // Unigrams only: p1 = 5/6.
    expect(bleu("the cat sat on the mat", "the cat sat on a mat", 1)).toBeCloseTo(5 / 6, 12);
  });
});

describe("ROUGE-L", () => {
  it("is the F1 of the longest common subsequence of words", () => {
    // LCS "the cat sat on mat" = 5 words; R = 5/6, P = 5/6.
    expect(rougeL("the cat sat on the mat", "the cat sat on a mat")).toBeCloseTo(5 / 6, 12);
    // LCS "the mat" = 2; R = 2/6, P = 2/3: F1 = 2RP/(R+P) = 4/9.
    expect(rougeL("the big mat", "the cat sat on a mat")).toBeCloseTo(4 / 9, 12);
  });

  it("is 0 with no word in common", () => {
    expect(rougeL("dogs bark", "the cat sat")).toBe(0);
  });

  it(`matches only the first ${ROUGE_L_MAX_WORDS} words of each text, dividing by the whole lengths`, () => {
    const filler = (n: number) => Array.from({ length: n }, () => "x").join(" ");
    // The reference's words come after the cap: not matched, so 0 (unbounded: LCS 2, a score above 0).
    expect(rougeL(`${filler(ROUGE_L_MAX_WORDS)} alpha beta`, "alpha beta")).toBe(0);
    // Within the cap: LCS 2, R = 2/2, P = 2/(2000 + 2), so F1 = 2RP/(R+P).
    const p = 2 / (ROUGE_L_MAX_WORDS + 2);
    expect(rougeL(`alpha beta ${filler(ROUGE_L_MAX_WORDS)}`, "alpha beta")).toBeCloseTo((2 * p) / (1 + p), 12);
  });
});

it("tokenizes into lower-cased words of letters and digits, in any script", () => {
  expect(tokens("Hello, World! Größe 42 — naïve")).toEqual(["hello", "world", "größe", "42", "naïve"]);
});

describe("expected tool calls", () => {
  const call = (name: string, args: Record<string, unknown> = {}, id = name) => ({
    name,
    arguments: args as never,
    call_id: id,
  });

  it("matches names in order, with other calls in between", () => {
    const calls = [call("Read"), call("Grep"), call("Write")];
    expect(matchToolCalls([{ name: "Read" }, { name: "Write" }], calls, true)).toEqual({ score: 1, missing: [] });
  });

  it("counts only the longest in-order subsequence when the calls come out of order", () => {
    const calls = [call("Grep"), call("Write"), call("Read")];
    // In order, Grep then Write match (2 of 3); Read came last, so it is the one missing.
    expect(matchToolCalls([{ name: "Read" }, { name: "Grep" }, { name: "Write" }], calls, true)).toEqual({
      score: 2 / 3,
      missing: [{ name: "Read" }],
    });
    // In any order, all three match.
    expect(matchToolCalls([{ name: "Read" }, { name: "Grep" }, { name: "Write" }], calls, false)).toEqual({
      score: 1,
      missing: [],
    });
  });

  it("matches the arguments given as a subset, by JSON equality, ignoring the call's other arguments", () => {
    const calls = [call("Read", { path: "a.txt", limit: 10, options: { b: 1, a: [1, 2] } })];
    const subset = { name: "Read", arguments: { path: "a.txt", options: { a: [1, 2], b: 1.0 } } };
    expect(matchToolCalls([subset], calls, true).score).toBe(1);
    const wrongValue = { name: "Read", arguments: { path: "b.txt" } };
    expect(matchToolCalls([wrongValue], calls, true)).toEqual({ score: 0, missing: [wrongValue] });
    const absentKey = { name: "Read", arguments: { offset: 0 } };
    expect(matchToolCalls([absentKey], calls, true).score).toBe(0);
  });

  it("looks only at the call's own arguments, not at what every object inherits", () => {
    // JSON.parse makes "__proto__" an own key of the expected arguments; `in` found it on every call's arguments.
    const inherited = { name: "Read", arguments: JSON.parse('{"__proto__": {}}') };
    expect(callMatches(inherited, call("Read", {}))).toBe(false);
    expect(callMatches(inherited, call("Read", JSON.parse('{"__proto__": {}}')))).toBe(true);
  });

  it("gives each expected call a call of its own", () => {
    const calls = [call("Read", { path: "a" }, "1")];
    expect(matchToolCalls([{ name: "Read" }, { name: "Read" }], calls, false).score).toBe(0.5);
    // The one that needs the specific call gets it when a maximum matching exists.
    const two = [call("Read", { path: "a" }, "1"), call("Read", { path: "b" }, "2")];
    expect(matchToolCalls([{ name: "Read" }, { name: "Read", arguments: { path: "a" } }], two, false).score).toBe(1);
  });

  it("expects no call at all from an empty list", () => {
    expect(matchToolCalls([], [], true).score).toBe(1);
    expect(matchToolCalls([], [call("Read")], true).score).toBe(0);
  });
});
