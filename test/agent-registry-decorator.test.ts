// `@registry.register("name")` written as a TC39 class decorator (seed 000's usage pattern). Kept in its own file
// because the decorator is syntax: if the test toolchain does not lower it, this file fails to load (a
// SyntaxError from workerd) and every test in it fails, without taking agents.test.ts down with it.
import { describe, expect, it } from "vitest";
import { Agent } from "../src/agents/agent.ts";
import { AgentRegistry } from "../src/agents/registry.ts";
import { DuplicateAgentError } from "../src/errors.ts";

describe("@registry.register(name) as a class decorator", () => {
  it("registers the decorated class under the name and leaves the class usable", () => {
    const registry = new AgentRegistry();

    @registry.register("decorated")
    class DecoratedAgent extends Agent {
      constructor() {
        super({ name: "decorated", systemPrompt: "Decorated." });
      }
    }

    expect(registry.get("decorated")).toBe(DecoratedAgent);
    expect(registry.create("decorated")).toBeInstanceOf(DecoratedAgent);
  });

  it("throws DuplicateAgentError when the class is defined, if the name is taken", () => {
    const registry = new AgentRegistry();
    class First extends Agent {
      constructor() {
        super({ name: "taken", systemPrompt: "First." });
      }
    }
    registry.register("taken", First);

    expect(() => {
      @registry.register("taken")
      class Second extends Agent {
        constructor() {
          super({ name: "taken", systemPrompt: "Second." });
        }
      }
      return Second;
    }).toThrow(DuplicateAgentError);
    expect(registry.get("taken")).toBe(First);
  });
});
