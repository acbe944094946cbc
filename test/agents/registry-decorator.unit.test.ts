// `@registry.register("name")` written as a class decorator (seed 000's usage pattern). Outpost uses TypeScript's
// decorators (tsconfig experimentalDecorators), which tsc, wrangler's esbuild and vitest's oxc all lower the same
// way. Kept in its own file because a decorator is syntax: if a toolchain stopped lowering it, this file would fail
// to load (a SyntaxError) without taking agents.unit.test.ts down with it.
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agents/agent.ts";
import { AgentRegistry } from "../../src/agents/registry.ts";
import { DuplicateAgentError } from "../../src/errors.ts";

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
