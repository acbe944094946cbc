import { expect, it } from "vitest";
import { Agent } from "../src/agents/agent.ts";
import { AgentRegistry } from "../src/agents/registry.ts";

it("deco", () => {
  const registry = new AgentRegistry();
  @registry.register("deco_agent")
  class DecoAgent extends Agent {
    constructor() {
      super({ name: "deco_agent", systemPrompt: "x" });
    }
  }
  console.log(String(DecoAgent).slice(0, 300));
  expect(registry.list()).toEqual(["deco_agent"]);
  expect(registry.get("deco_agent")).toBe(DecoAgent);
});
