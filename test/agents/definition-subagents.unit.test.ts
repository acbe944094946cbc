// Whether an agent can reach itself through its sub-agents: the one check PUT /v1/agents/:name and the build of
// agents/ both ask (src/agents/definition-subagents.ts). PUT's use of it is test/agents/definition-refusals.test.ts.
import { describe, expect, it } from "vitest";
import { subagentCycle, subagentNames } from "../../src/agents/definition-subagents.ts";

describe("subagentCycle", () => {
  const lists = new Map<string, readonly string[]>([
    ["a", ["b"]],
    ["b", ["c", "d"]],
    ["c", []],
    ["d", ["e"]],
    ["loop", ["loop2"]],
    ["loop2", ["loop"]],
  ]);
  const of = (name: string) => lists.get(name);

  it("finds the path back to the agent through the others, in list order", () => {
    expect(subagentCycle("e", ["c", "a"], of)).toEqual(["e", "a", "b", "d", "e"]);
    expect(subagentCycle("a", ["x", "a"], of)).toEqual(["a", "a"]);
  });

  it("finds none where the agents lead elsewhere, to unknown names, or round a cycle of others", () => {
    expect(subagentCycle("e", ["c"], of)).toBeNull();
    expect(subagentCycle("x", ["unknown"], of)).toBeNull();
    expect(subagentCycle("x", ["loop"], of)).toBeNull();
  });

  it("reads the sub-agents of a stored definition, whatever it holds", () => {
    expect(subagentNames({ subagents: { enabled: true, agents: ["a", 3, "b"] } })).toEqual(["a", "b"]);
    expect(subagentNames({ name: "x" })).toEqual([]);
    expect(subagentNames(null)).toEqual([]);
  });
});
