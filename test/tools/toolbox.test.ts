// The ledger of settled tool calls: a tool that changes the workspace commits its changes together with its result,
// keyed by the tool_use id, so the replay of a step interrupted after that commit (an eviction between the commit
// and the step's journal entry) returns the recorded result instead of running the call again on changed files.
// Each test drives a real Toolbox over a fresh Durable Object's SQLite and the real R2 binding; the runtime is a
// small recorder of the events the toolbox emits.

import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { Agent } from "../../src/agents/agent.ts";
import type { ToolRuntime } from "../../src/contracts/runtime.ts";
import type { ToolResult } from "../../src/contracts/tool-result.ts";
import { Redactor } from "../../src/events/redaction.ts";
import { outboundPolicy } from "../../src/net/outbound.ts";
import { migrate } from "../../src/storage/migrations.ts";
import type { ToolSettingsInput } from "../../src/tools/settings.ts";
import { Toolbox } from "../../src/tools/toolbox.ts";
import { Workspace } from "../../src/workspace/workspace.ts";
import { MAX_PENDING_BYTES, WorkspaceFs } from "../../src/workspace/workspace-fs.ts";
import { runsStore } from "../support/runs-bucket.ts";

interface Emitted {
  type: string;
  payload: Record<string, unknown>;
}

interface Harness {
  ws: Workspace;
  /** Every event the toolbox emitted, in order. */
  emitted: Emitted[];
  /** Artifact paths the tools saved to the run bundle. */
  artifacts: string[];
  /** Calls a tool as the agent loop does (turn 1, attempt 1, position 1). */
  call(id: string, name: string, input: Record<string, unknown>): Promise<ToolResult>;
  /** A committed file's text. */
  read(path: string): Promise<string>;
}

const SHELL_AND_FILES: ToolSettingsInput = {
  bash: { enabled: true },
  fileSystem: { read: true, write: true, edit: true },
};

/** Runs `fn` inside a new Durable Object with a migrated, empty workspace and a Toolbox over it. */
function withToolbox<T>(settings: ToolSettingsInput, fn: (h: Harness) => Promise<T>): Promise<T> {
  const stub = env.TASKS.get(env.TASKS.idFromName(`toolbox-${crypto.randomUUID()}`));
  return runInDurableObject(stub, async (_instance, state) => {
    const sql = state.storage.sql;
    migrate(state.storage);
    const prefix = `workspaces/t-${crypto.randomUUID()}/`;
    const ws = new Workspace(
      sql,
      runsStore(),
      () => prefix,
      (f) => state.storage.transactionSync(f),
    );
    const emitted: Emitted[] = [];
    const artifacts: string[] = [];
    const abort = new AbortController();
    const unused = (): never => {
      throw new Error("not used by tool calls");
    };
    const runtime: ToolRuntime = {
      signal: abort.signal,
      step: unused,
      checkpoint: unused,
      artifact: async (path) => {
        artifacts.push(path);
      },
      emit: (type, payload) => {
        emitted.push({ type, payload });
      },
      state: { get: () => undefined, put: () => undefined },
      taskState: { get: () => undefined, put: () => undefined },
    };
    const agent = new (class extends Agent {})({ name: "x", systemPrompt: "x", ...settings });
    const toolbox = new Toolbox(agent.toolDeclaration(), {
      taskId: "t",
      runtime,
      secret: () => undefined,
      outbound: outboundPolicy(""),
      workspace: ws,
      redactor: new Redactor([]),
    });
    return fn({
      ws,
      emitted,
      artifacts,
      call: (id, name, input) =>
        toolbox.call(
          { type: "tool_use", id, name, input, caller: { type: "direct" } },
          1,
          { attempt: 1, spanId: "s" },
          1,
        ),
      read: (path) => new WorkspaceFs(ws, { readOnly: true }).readFile(path),
    });
  });
}

/**
 * Calls the tool, then calls it again with the same tool_use id (the replay of a step interrupted after its
 * commit). Returns both results and the events each call emitted.
 */
async function callTwice(
  h: Harness,
  id: string,
  name: string,
  input: Record<string, unknown>,
): Promise<{ first: ToolResult; second: ToolResult; firstEvents: Emitted[]; secondEvents: Emitted[] }> {
  const start = h.emitted.length;
  const first = await h.call(id, name, input);
  const middle = h.emitted.length;
  const second = await h.call(id, name, input);
  return { first, second, firstEvents: h.emitted.slice(start, middle), secondEvents: h.emitted.slice(middle) };
}

/** The replay emitted exactly one event: a recovered tool_call_completed matching the first call's. */
function expectRecovered(replay: Emitted[], original: Emitted[], id: string, name: string): void {
  const completed = original.find((e) => e.type === "tool_call_completed");
  expect(original.map((e) => e.type)).toEqual(["tool_call_started", "tool_call_completed"]);
  expect(replay).toHaveLength(1);
  expect(replay[0]?.type).toBe("tool_call_completed");
  expect(replay[0]?.payload).toMatchObject({
    tool_use_id: id,
    tool_name: name,
    recovered: true,
    duration_ms: 0,
    is_error: completed?.payload.is_error,
    output_preview: completed?.payload.output_preview,
  });
  expect(completed?.payload.recovered).toBeUndefined();
}

describe("settled tool calls", () => {
  it("a replayed Bash call returns its recorded result and does not run the command again", () =>
    withToolbox(SHELL_AND_FILES, async (h) => {
      const { first, second, firstEvents, secondEvents } = await callTwice(h, "toolu_1", "Bash", {
        command: "echo once >> log.txt",
      });
      expect(first).toEqual({ content: "exit code: 0", is_error: false });
      expect(second).toEqual(first);
      expect(await h.read("/log.txt")).toBe("once\n");
      expectRecovered(secondEvents, firstEvents, "toolu_1", "Bash");
      // The recovered event keeps the call's seed 002 details.
      expect(secondEvents[0]?.payload.details).toEqual(
        firstEvents.find((e) => e.type === "tool_call_completed")?.payload.details,
      );
      expect(h.ws.settled("toolu_1")).toMatchObject({ content: "exit code: 0", is_error: false });
    }));

  it("settles per tool_use id: the same command under another id runs again", () =>
    withToolbox(SHELL_AND_FILES, async (h) => {
      await h.call("toolu_a", "Bash", { command: "echo once >> log.txt" });
      await h.call("toolu_a", "Bash", { command: "echo once >> log.txt" });
      await h.call("toolu_b", "Bash", { command: "echo once >> log.txt" });
      expect(await h.read("/log.txt")).toBe("once\nonce\n");
      expect(h.emitted.filter((e) => e.type === "tool_call_started")).toHaveLength(2);
    }));

  it("a replayed Write returns its recorded result (Created, not Overwrote) and writes nothing more", () =>
    withToolbox(SHELL_AND_FILES, async (h) => {
      const { first, second, firstEvents, secondEvents } = await callTwice(h, "toolu_w", "Write", {
        file_path: "notes/a.md",
        content: "# A\n",
      });
      expect(first).toEqual({ content: "Created /workspace/notes/a.md (4 bytes).", is_error: false });
      // Run again, Write would find the file and say "Overwrote".
      expect(second).toEqual(first);
      expect(await h.read("/notes/a.md")).toBe("# A\n");
      expectRecovered(secondEvents, firstEvents, "toolu_w", "Write");
    }));

  it("a replayed Edit returns its recorded result instead of failing with old_string not found", () =>
    withToolbox(SHELL_AND_FILES, async (h) => {
      h.ws.seed([["/src/app.ts", "const greeting = 'hello';\n"]]);
      const { first, second, firstEvents, secondEvents } = await callTwice(h, "toolu_e", "Edit", {
        file_path: "src/app.ts",
        old_string: "'hello'",
        new_string: "'hello, world'",
      });
      expect(first).toEqual({ content: "Edited /workspace/src/app.ts: 1 replacement.", is_error: false });
      expect(second).toEqual(first);
      expect(String(second.content)).not.toContain("not found");
      expect(await h.read("/src/app.ts")).toBe("const greeting = 'hello, world';\n");
      expectRecovered(secondEvents, firstEvents, "toolu_e", "Edit");
    }));

  it("a failing Bash command (exit 1) that changed files settles too, with its is_error result", () =>
    withToolbox(SHELL_AND_FILES, async (h) => {
      const { first, second, firstEvents, secondEvents } = await callTwice(h, "toolu_f", "Bash", {
        command: "echo partial >> out.txt && false",
      });
      expect(first).toEqual({ content: "exit code: 1", is_error: true });
      expect(second).toEqual(first);
      expect(await h.read("/out.txt")).toBe("partial\n");
      expectRecovered(secondEvents, firstEvents, "toolu_f", "Bash");
      expect(secondEvents[0]?.payload.is_error).toBe(true);
    }));

  it("a Bash call that changed nothing leaves nothing to settle, so its replay runs it again", () =>
    withToolbox(SHELL_AND_FILES, async (h) => {
      const { first, second, firstEvents, secondEvents } = await callTwice(h, "toolu_n", "Bash", {
        command: "echo hi",
      });
      expect(first).toEqual({ content: "exit code: 0\nstdout:\nhi\n", is_error: false });
      expect(second).toEqual(first);
      expect(h.ws.settled("toolu_n")).toBeUndefined();
      expect(firstEvents.map((e) => e.type)).toEqual(["tool_call_started", "tool_call_completed"]);
      // Run again in full: started, then completed without `recovered`.
      expect(secondEvents.map((e) => e.type)).toEqual(["tool_call_started", "tool_call_completed"]);
      expect(secondEvents[1]?.payload.recovered).toBeUndefined();
      // Its output was saved twice (once per run).
      expect(h.artifacts).toEqual(["artifacts/turn_1_step-1_stdout.txt", "artifacts/turn_1_step-1_stdout.txt"]);
    }));
});

describe("one tool call's pending changes are bounded", () => {
  it("a Bash command that writes more than MAX_PENDING_BYTES gets ENOSPC and keeps within the bound", () =>
    withToolbox(SHELL_AND_FILES, async (h) => {
      // The shell's hardened limits cap a command's redirected output at 10 MiB, so the bytes come from cp: an
      // 8 MiB file and copies of it. big + c1..c7 fill the 64 MiB exactly; c8 is over.
      const MiB8 = 8 * 1024 * 1024;
      expect(MAX_PENDING_BYTES).toBe(8 * MiB8);
      const copies = Array.from({ length: 8 }, (_, i) => `cp big c${i + 1}`).join(" && ");
      const result = await h.call("toolu_big", "Bash", {
        command: `s=x; for i in $(seq 1 23); do s="$s$s"; done; printf "%s" "$s" > big && ${copies} && echo never`,
      });
      expect(result.is_error).toBe(true);
      const text = String(result.content);
      expect(text).toMatch(/^exit code: 1\n/);
      expect(text).toMatch(/ENOSPC: no space left on device \(one tool call may change at most 64 MiB of files\).*c8/);
      expect(text).not.toContain("never");
      const files = h.ws.list().filter((e) => e.type === "file");
      expect(files.map((f) => f.path)).not.toContain("c8");
      expect(files.reduce((sum, f) => sum + f.size, 0)).toBeLessThanOrEqual(MAX_PENDING_BYTES);
    }));
});
