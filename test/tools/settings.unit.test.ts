// Least privilege (seed 004 ClaudeConfig): every built-in capability is off unless the agent's definition turns it
// on, unknown keys are refused with their path, and allowedTools can never widen what the settings allow.
import { describe, expect, it } from "vitest";
import { Agent, type AgentDefinition } from "../../src/agents/agent.ts";
import { ConfigError } from "../../src/errors.ts";
import { errorOf } from "../support/checks.ts";

class TestAgent extends Agent {}

function define(extra: Partial<AgentDefinition>): TestAgent {
  return new TestAgent({ name: "settings_agent", systemPrompt: "You work.", ...extra });
}

describe("tool settings", () => {
  it("turns every capability off by default", () => {
    const agent = define({});
    expect(agent.settings).toEqual({
      bash: { enabled: false, excluded_commands: [], allow_unsafe: false },
      fileSystem: { read: false, write: false, edit: false },
      webFetch: { enabled: false, max_bytes: 1024 * 1024, timeout_seconds: 30 },
      subagents: { enabled: false, max_parallel: 4, agents: [] },
      workingDirectory: "/",
    });
    expect(agent.allowedTools).toEqual([]);
  });

  it("gives an agent without allowedTools exactly the built-ins its settings turn on", () => {
    expect(define({ fileSystem: { read: true } }).allowedTools).toEqual(["Read", "Glob", "Grep"]);
    expect(define({ fileSystem: { write: true, edit: true } }).allowedTools).toEqual(["Write", "Edit"]);
    expect(define({ bash: { enabled: true }, webFetch: { enabled: true } }).allowedTools).toEqual(["Bash", "WebFetch"]);
  });

  it("refuses allowedTools that name a built-in whose capability is off", () => {
    const error = errorOf(() => define({ allowedTools: ["Bash"] }));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toBe(
      'Agent "settings_agent": allowedTools lists Bash, which needs bash.enabled: true in the agent\'s definition.',
    );
    expect(
      errorOf(() => define({ allowedTools: ["Edit"], fileSystem: { read: true, write: true } })).message,
    ).toContain("needs fileSystem.edit: true");
    // A narrower list than the settings allow is fine.
    expect(define({ allowedTools: ["Read"], fileSystem: { read: true, write: true } }).allowedTools).toEqual(["Read"]);
  });

  it.each([
    [{ bash: { enabled: true, excluded_command: ["rm"] } }, "unknown key bash.excluded_command"],
    [{ fileSystem: { read: true, delete: true } }, "unknown key fileSystem.delete"],
    [{ webFetch: { enabled: true, max_bytes: 0 } }, "webFetch.max_bytes"],
    [{ webFetch: { enabled: true, timeout_seconds: 500 } }, "webFetch.timeout_seconds"],
    [{ bash: { enabled: "yes" } }, "bash.enabled"],
    [{ bash: { excluded_commands: ["rm -rf"] } }, "bash.excluded_commands.0"],
  ])("refuses %j with a ConfigError naming the key", (settings, expected) => {
    const error = errorOf(() => define(settings as Partial<AgentDefinition>));
    expect(error).toBeInstanceOf(ConfigError);
    expect(error.message).toContain(expected);
  });

  it("refuses unknown keys in the definition itself, pointing seed spellings to the definition's names", () => {
    const seed = errorOf(() => define({ file_system: { read: true } } as unknown as Partial<AgentDefinition>));
    expect(seed).toBeInstanceOf(ConfigError);
    expect(seed.message).toBe(
      'Agent "settings_agent": unknown key "file_system" (the definition spells it fileSystem).',
    );
    const typo = errorOf(() => define({ filesystem: { read: true } } as unknown as Partial<AgentDefinition>));
    expect(typo.message).toBe('Agent "settings_agent": unknown key "filesystem".');
  });
});
