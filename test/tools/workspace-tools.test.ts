// Workspace tools end to end through the API: files seeded with the task, Read/Write/Edit/Glob/Grep, Bash on
// just-bash with its output in the run bundle, WebFetch against a real local server, least-privilege settings, the
// workspace routes, and a workspace that survives an eviction without a half-run command leaving anything behind.

import { abortAllDurableObjects, runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, inject, it } from "vitest";
import type { RequestErrorCode } from "../../src/errors/codes.ts";
import { WorkspaceListSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  events,
  expectError,
  fireTimers,
  ofType,
  type ScriptTurn,
  script,
  startTask,
  stubFor,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForEvent,
  waitForTask,
} from "../support/helpers.ts";
import { runsBucket } from "../support/runs-bucket.ts";

const WEB_URL = inject("webUrl");

const files = { fileSystem: { read: true, write: true, edit: true } } as const;

/** Runs an agent through one scripted turn of tool calls and a closing answer; returns the task id. */
async function runTurn(
  agent: string,
  calls: ScriptTurn["content"],
  options: { files?: Record<string, string>; expect?: string } = {},
): Promise<string> {
  const marker = uniqueMarker("ws");
  await script(marker, [{ content: calls, stop_reason: "tool_use" }, done]);
  const task = await startTask(agent, `work ${marker}`, options.files ? { files: options.files } : {});
  const finished = await waitForTask(task.id);
  expect(finished.status).toBe(options.expect ?? "completed");
  return task.id;
}

async function workspaceFile(id: string, path: string): Promise<Response> {
  return api(`/v1/tasks/${id}/workspace/${path}`);
}

describe("file tools over the workspace", () => {
  it("reads, searches, edits and writes files seeded with the task, and serves the result over the API", async () => {
    const agent = defineAgent({ ...files });
    const id = await runTurn(
      agent,
      [
        toolUse("Read", { file_path: "/workspace/src/app.ts" }),
        toolUse("Glob", { pattern: "**/*.ts" }),
        toolUse("Grep", { pattern: "TODO", output_mode: "content" }),
        toolUse("Edit", { file_path: "src/app.ts", old_string: "TODO: greet", new_string: "greet()" }),
        toolUse("Write", { file_path: "notes/summary.md", content: "# Summary\nDone.\n" }),
        toolUse("Read", { file_path: "/workspace/src/app.ts" }),
      ],
      {
        files: {
          "src/app.ts": "export {};\n// TODO: greet\n",
          "src/lib/util.ts": "export const x = 1;\n",
          "README.md": "hi\n",
        },
      },
    );
    const results = await toolResults(id, 2);
    expect(results.map((r) => r.is_error)).toEqual([false, false, false, false, false, false]);
    expect(results[0]?.content).toBe("     1\texport {};\n     2\t// TODO: greet");
    expect(String(results[1]?.content).split("\n").sort()).toEqual([
      "/workspace/src/app.ts",
      "/workspace/src/lib/util.ts",
    ]);
    expect(results[2]?.content).toBe("/workspace/src/app.ts:2:// TODO: greet");
    expect(results[3]?.content).toBe("Edited /workspace/src/app.ts: 1 replacement.");
    expect(results[4]?.content).toBe("Created /workspace/notes/summary.md (16 bytes).");
    expect(results[5]?.content).toBe("     1\texport {};\n     2\t// greet()");

    const listing = await apiJson(`/v1/tasks/${id}/workspace`, WorkspaceListSchema);
    expect(listing.files.map((f) => [f.path, f.type])).toEqual([
      ["README.md", "file"],
      ["notes", "directory"],
      ["notes/summary.md", "file"],
      ["src", "directory"],
      ["src/app.ts", "file"],
      ["src/lib", "directory"],
      ["src/lib/util.ts", "file"],
    ]);
    const summaryEntry = listing.files.find((f) => f.path === "notes/summary.md");
    expect(summaryEntry?.type === "file" && summaryEntry.url).toBe(
      `https://outpost.test/v1/tasks/${id}/workspace/notes/summary.md`,
    );
    const summary = await workspaceFile(id, "notes/summary.md");
    expect(summary.status).toBe(200);
    expect(summary.headers.get("content-type")).toBe("text/markdown; charset=utf-8");
    expect(await summary.text()).toBe("# Summary\nDone.\n");
    expect(await (await workspaceFile(id, "src/app.ts")).text()).toBe("export {};\n// greet()\n");
  });

  it("answers a bad path, a missing file and an ambiguous edit with errors the model can act on", async () => {
    const agent = defineAgent({ ...files });
    const id = await runTurn(
      agent,
      [
        toolUse("Read", { file_path: "../../etc/passwd" }),
        toolUse("Read", { file_path: "missing.txt" }),
        toolUse("Edit", { file_path: "a.txt", old_string: "x", new_string: "y" }),
        toolUse("Edit", { file_path: "a.txt", old_string: "nope", new_string: "y" }),
        toolUse("Write", { file_path: "/etc/hosts", content: "x" }),
        toolUse("Read", { path: "a.txt" }),
      ],
      { files: { "a.txt": "x x x\n" } },
    );
    const results = await toolResults(id, 2);
    expect(results.every((r) => r.is_error)).toBe(true);
    const texts = results.map((r) => String(r.content));
    expect(texts[0]).toContain("outside the workspace");
    expect(texts[1]).toBe("ENOENT: no such file or directory, open '/workspace/missing.txt'");
    expect(texts[2]).toContain("occurs 3 times");
    expect(texts[3]).toContain("was not found");
    expect(texts[4]).toContain("outside the workspace");
    expect(texts[5]).toContain("Invalid Read input");
    // Nothing was changed.
    expect(await (await workspaceFile(id, "a.txt")).text()).toBe("x x x\n");
  });

  it("keeps a large file in R2 and serves it whole", async () => {
    const agent = defineAgent({ ...files });
    const big = `${"0123456789abcdef".repeat(20_000)}\n`; // 320 KB: above the 256 KiB row limit
    const id = await runTurn(agent, [
      toolUse("Write", { file_path: "data/big.txt", content: big }),
      toolUse("Grep", { pattern: "cdef$", output_mode: "count" }),
    ]);
    const results = await toolResults(id, 2);
    expect(results[1]?.content).toBe("/workspace/data/big.txt:1");
    const res = await workspaceFile(id, "data/big.txt");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-length")).toBe(String(big.length));
    // Served from R2, with the same headers as a file kept in a row.
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("content-security-policy")).toContain("sandbox");
    expect(await res.text()).toBe(big);
    const spilled = await runsBucket().list({ prefix: `workspaces/${id}/` });
    expect(spilled.objects).toHaveLength(1);
  });
});

describe("Grep", () => {
  it("uses RE2: refuses backreferences and lookaround, saying so, and stays linear on a catastrophic pattern", async () => {
    const agent = defineAgent({ ...files });
    const id = await runTurn(
      agent,
      [
        toolUse("Grep", { pattern: "(a)\\1" }),
        toolUse("Grep", { pattern: "(?=a)b" }),
        // Exponential for a backtracking engine on this line (50,000 a's then b); RE2 answers in linear time.
        toolUse("Grep", { pattern: "(a+)+$", output_mode: "count" }),
      ],
      { files: { "as.txt": `${"a".repeat(50_000)}b\naaa\n` } },
    );
    const results = await toolResults(id, 2);
    expect(results.map((r) => r.is_error)).toEqual([true, true, false]);
    expect(results[0]?.content).toBe(
      "Invalid regular expression (RE2 syntax: no backreferences or lookaround): error parsing regexp: invalid escape sequence: `\\1`",
    );
    expect(String(results[1]?.content)).toMatch(/^Invalid regular expression \(RE2 syntax/);
    // Only the short line matches: the long one ends in b.
    expect(results[2]?.content).toBe("/workspace/as.txt:1");
  });

  it("matches case-insensitively only when asked", async () => {
    const agent = defineAgent({ ...files });
    const id = await runTurn(
      agent,
      [
        toolUse("Grep", { pattern: "hello world", output_mode: "content" }),
        toolUse("Grep", { pattern: "hello world", output_mode: "content", case_insensitive: true }),
      ],
      { files: { "a.txt": "Hello World\nhello there\n", "b.txt": "HELLO WORLD\n" } },
    );
    const results = await toolResults(id, 2);
    expect(results[0]).toMatchObject({ is_error: false, content: "No matches." });
    expect(results[1]).toMatchObject({
      is_error: false,
      content: "/workspace/a.txt:1:Hello World\n/workspace/b.txt:1:HELLO WORLD",
    });
  });

  it("skips a file over 8 MiB and names it, and still searches one of exactly 8 MiB", async () => {
    const agent = defineAgent({ bash: { enabled: true }, fileSystem: { read: true, write: true } });
    // Each file in its own command: the shell caps one command's redirected output at 10 MiB.
    const eightMiB = 's=x; for i in $(seq 1 23); do s="$s$s"; done';
    const id = await runTurn(agent, [
      toolUse("Bash", { command: `${eightMiB}; printf "%s%s" "$s" "yz" > huge.txt && wc -c huge.txt` }),
      toolUse("Bash", { command: `${eightMiB}; printf "%s" "$s" > exact.txt && wc -c exact.txt` }),
      toolUse("Grep", { pattern: "x", output_mode: "count" }),
      toolUse("Grep", { pattern: "nothing-like-this" }),
    ]);
    const results = await toolResults(id, 2);
    expect(results[0]?.content).toBe("exit code: 0\nstdout:\n8388610 huge.txt\n");
    expect(results[1]?.content).toBe("exit code: 0\nstdout:\n8388608 exact.txt\n");
    expect(results[2]).toMatchObject({
      is_error: false,
      content: "/workspace/exact.txt:1\nNot searched (over 8 MiB; use Bash grep): /workspace/huge.txt",
    });
    expect(results[3]).toMatchObject({
      is_error: false,
      content: "No matches.\nNot searched (over 8 MiB; use Bash grep): /workspace/huge.txt",
    });
  });
});

describe("Bash on just-bash", () => {
  const shell = { bash: { enabled: true }, fileSystem: { read: true, write: true } } as const;

  it("runs a command in /workspace, keeps its file changes, and records it per seed 002", async () => {
    const agent = defineAgent(shell);
    const id = await runTurn(agent, [
      toolUse("Bash", { command: "mkdir -p out && echo hello > out/a.txt && cat out/a.txt | wc -c && pwd && ls" }),
    ]);
    const [result] = await toolResults(id, 2);
    expect(result).toMatchObject({ is_error: false, content: "exit code: 0\nstdout:\n6\n/workspace\nout\n" });
    expect(await (await workspaceFile(id, "out/a.txt")).text()).toBe("hello\n");
    const [completed] = ofType(await events(id), "tool_call_completed");
    expect(completed?.payload.details).toEqual({
      command: "mkdir -p out && echo hello > out/a.txt && cat out/a.txt | wc -c && pwd && ls",
      step_result: {
        step_id: "step-1",
        exit_code: 0,
        stdout_summary: "6\n/workspace\nout\n",
        stderr_summary: "",
        retry_count: 0,
        status: "success",
        stdout_artifact: "artifacts/turn_1_step-1_stdout.txt",
        stderr_artifact: null,
      },
      changed_paths: ["/workspace/out", "/workspace/out/a.txt"],
    });
    const artifact = await api(`/v1/tasks/${id}/artifacts/artifacts/turn_1_step-1_stdout.txt`);
    expect(await artifact.text()).toBe("6\n/workspace\nout\n");
  });

  it("cuts long output for the model and keeps all of it in the run bundle", async () => {
    const agent = defineAgent(shell);
    const id = await runTurn(agent, [
      toolUse("Bash", { command: 'for i in $(seq 1 3000); do echo "line $i of the long output"; done' }),
    ]);
    const [result] = await toolResults(id, 2);
    const text = String(result?.content);
    expect(text.length).toBeLessThan(31_000);
    expect(text).toContain("characters cut; the full output is artifacts/turn_1_step-1_stdout.txt in the run bundle");
    expect(text).toContain("line 1 of the long output");
    expect(text).toContain("line 3000 of the long output");
    const full = await (await api(`/v1/tasks/${id}/artifacts/artifacts/turn_1_step-1_stdout.txt`)).text();
    expect(full.split("\n").filter(Boolean)).toHaveLength(3000);
  });

  it("reports a failing command as an error with its stderr saved, numbering steps within the turn", async () => {
    const agent = defineAgent(shell);
    const id = await runTurn(agent, [
      toolUse("Bash", { command: "echo first" }),
      toolUse("Bash", { command: "cat nothing-here.txt" }),
    ]);
    const results = await toolResults(id, 2);
    expect(results[0]?.is_error).toBe(false);
    expect(results[1]?.is_error).toBe(true);
    expect(String(results[1]?.content)).toMatch(
      /^exit code: 1\nstderr:\ncat: nothing-here.txt: No such file or directory/,
    );
    const stderr = await api(`/v1/tasks/${id}/artifacts/artifacts/turn_1_step-2_stderr.txt`);
    expect(stderr.status).toBe(200);
    expect(await stderr.text()).toContain("No such file or directory");
  });

  it("refuses excluded commands, keeps the workspace read-only without fileSystem.write, and has no network by default", async () => {
    const agent = defineAgent({ bash: { enabled: true, excluded_commands: ["rm"] }, fileSystem: { read: true } });
    const id = await runTurn(
      agent,
      [
        toolUse("Bash", { command: "rm keep.txt" }),
        toolUse("Bash", { command: "echo changed > keep.txt" }),
        toolUse("Bash", { command: `curl -s ${WEB_URL}/plain.txt` }),
        toolUse("Bash", { command: "cat keep.txt; echo scratch > /tmp/t && cat /tmp/t" }),
      ],
      { files: { "keep.txt": "original\n" } },
    );
    const texts = (await toolResults(id, 2)).map((r) => String(r.content));
    expect(texts[0]).toContain("rm: not allowed for this agent (bash.excluded_commands)");
    expect(texts[0]).toMatch(/^exit code: 126/);
    expect(texts[1]).toContain(
      "EROFS: read-only file system (this agent's file_system.write is off), open '/workspace/keep.txt'",
    );
    expect(texts[2]).toMatch(/^exit code: 127/);
    expect(texts[3]).toBe("exit code: 0\nstdout:\noriginal\nscratch\n");
    expect(await (await workspaceFile(id, "keep.txt")).text()).toBe("original\n");
  });

  it("lets curl through the outbound guard with allow_unsafe", async () => {
    const agent = defineAgent({ bash: { enabled: true, allow_unsafe: true } });
    const id = await runTurn(agent, [
      toolUse("Bash", { command: `curl -s ${WEB_URL}/plain.txt` }),
      toolUse("Bash", { command: "curl -sS http://10.0.0.1/" }),
    ]);
    const texts = (await toolResults(id, 2)).map((r) => String(r.content));
    expect(texts[0]).toBe("exit code: 0\nstdout:\nplain text body\n");
    expect(texts[1]).toContain("not allowed");
  });

  it("stops a command at its timeout with exit code 124, whichever deadline fires first", async () => {
    const agent = defineAgent(shell);
    const id = await runTurn(agent, [toolUse("Bash", { command: "sleep 5", timeout: 1000 })]);
    const [result] = await toolResults(id, 2);
    expect(result?.is_error).toBe(true);
    expect(String(result?.content)).toMatch(/^exit code: 124\nstderr:\n/);
    expect(String(result?.content)).toContain("bash: the command did not finish within 1000 ms");
    const [completed] = ofType(await events(id), "tool_call_completed");
    expect(completed?.payload.details).toMatchObject({
      step_result: { exit_code: 124, status: "failed" },
    });
    expect(completed?.payload.duration_ms as number).toBeLessThan(5_000);
  });

  it("refuses an excluded command however it is invoked", async () => {
    // fileSystem.write is on: only the exclusion stands between these commands and the file.
    const agent = defineAgent({
      bash: { enabled: true, excluded_commands: ["rm"] },
      fileSystem: { read: true, write: true },
    });
    const attempts = [
      "echo keep.txt | xargs rm",
      'bash -c "rm keep.txt"',
      'sh -c "rm keep.txt"',
      "find . -name keep.txt -exec rm {} \\;",
      "/bin/rm keep.txt",
      "/usr/bin/rm keep.txt",
      "eval rm keep.txt",
      "command rm keep.txt",
      "env rm keep.txt",
      "exec rm keep.txt",
      "x=rm; $x keep.txt",
    ];
    const id = await runTurn(
      agent,
      attempts.map((command) => toolUse("Bash", { command })),
      { files: { "keep.txt": "original\n" } },
    );
    const results = await toolResults(id, 2);
    expect(results).toHaveLength(attempts.length);
    for (const [i, result] of results.entries()) {
      expect({ attempt: attempts[i], is_error: result.is_error }).toEqual({ attempt: attempts[i], is_error: true });
      expect(String(result.content)).toContain("rm: not allowed for this agent (bash.excluded_commands)");
    }
    const listing = await apiJson(`/v1/tasks/${id}/workspace`, WorkspaceListSchema);
    expect(listing.files.map((f) => f.path)).toEqual(["keep.txt"]);
    expect(await (await workspaceFile(id, "keep.txt")).text()).toBe("original\n");
  });

  it("refuses curl to a redirect that points at a private address, even with allow_unsafe", async () => {
    const agent = defineAgent({ bash: { enabled: true, allow_unsafe: true } });
    const id = await runTurn(agent, [
      toolUse("Bash", { command: `curl -sS -L ${WEB_URL}/redirect-private` }),
      toolUse("Bash", { command: `curl -sS ${WEB_URL}/redirect-private` }),
    ]);
    const results = await toolResults(id, 2);
    for (const result of results) {
      expect(result.is_error).toBe(true);
      expect(String(result.content)).toMatch(/^exit code: 1\n/);
      expect(String(result.content)).toContain("http://10.0.0.1/admin is not allowed");
    }
  });

  it("curl keeps credentials on a same-origin redirect and drops them on a cross-origin one", async () => {
    const agent = defineAgent({ bash: { enabled: true, allow_unsafe: true } });
    const headers = '-H "Authorization: Bearer secret-x" -H "Cookie: session=abc"';
    const id = await runTurn(agent, [
      toolUse("Bash", { command: `curl -s -L ${headers} ${WEB_URL}/redirect-cross-origin` }),
      toolUse("Bash", { command: `curl -s -L ${headers} ${WEB_URL}/redirect-same-origin` }),
      toolUse("Bash", { command: `curl -s ${headers} ${WEB_URL}/echo-credentials` }),
    ]);
    // What the model got: the conversation as stored (the API's copy, and the run bundle's, are redacted).
    type Block = { type: string; content?: unknown; is_error?: boolean };
    const stored = await runInDurableObject(stubFor(id), (_instance, state) =>
      state.storage.sql.exec<{ content: string }>("SELECT content FROM runtime_messages WHERE idx = 2").one(),
    );
    const turn = JSON.parse(stored.content) as Block[] | string;
    const results = (typeof turn === "string" ? [] : (turn as Block[])).filter((b) => b.type === "tool_result");
    expect(results).toHaveLength(3);
    const echoed = results.map((r) => {
      expect(r.is_error).toBe(false);
      const match = /^exit code: 0\nstdout:\n(.*)$/s.exec(String(r.content));
      return JSON.parse(match?.[1] ?? "null") as Record<string, unknown>;
    });
    expect(JSON.stringify(await toolResults(id, 2))).not.toContain("secret-x");
    expect(echoed[0]).toEqual({ origin: "other", authorization: null, cookie: null, "proxy-authorization": null });
    const kept = { authorization: "Bearer secret-x", cookie: "session=abc", "proxy-authorization": null };
    expect(echoed[1]).toEqual({ origin: "main", ...kept });
    expect(echoed[2]).toEqual({ origin: "main", ...kept });
  });
});

describe("WebFetch", () => {
  const web = { webFetch: { enabled: true, max_bytes: 64 * 1024, timeout_seconds: 1 } } as const;

  it("returns readable text, follows safe redirects, and refuses private targets, big bodies and slow servers", async () => {
    const agent = defineAgent(web);
    const id = await runTurn(agent, [
      toolUse("WebFetch", { url: `${WEB_URL}/page.html` }),
      toolUse("WebFetch", { url: `${WEB_URL}/redirect-ok` }),
      toolUse("WebFetch", { url: `${WEB_URL}/redirect-private` }),
      toolUse("WebFetch", { url: `${WEB_URL}/big` }),
      toolUse("WebFetch", { url: `${WEB_URL}/slow` }),
      toolUse("WebFetch", { url: `${WEB_URL}/missing` }),
      toolUse("WebFetch", { url: "http://localhost:1/" }),
    ]);
    const results = await toolResults(id, 2);
    const texts = results.map((r) => String(r.content));
    expect(results[0]?.is_error).toBe(false);
    expect(texts[0]).toContain("# Outpost fixture");
    expect(texts[0]).toContain("Hello & welcome to the [docs](/docs).");
    expect(texts[0]).toContain("- first");
    expect(texts[0]).not.toContain("do not show");
    expect(texts[1]).toContain(`URL: ${WEB_URL}/plain.txt`);
    expect(texts[1]).toContain("plain text body");
    expect(results[2]?.is_error).toBe(true);
    expect(texts[2]).toContain("http://10.0.0.1/admin is not allowed");
    expect(texts[3]).toContain("The body was cut at 65536 bytes");
    expect(results[4]?.is_error).toBe(true);
    expect(texts[4]).toContain("did not answer within 1 s");
    expect(results[5]?.is_error).toBe(true);
    expect(texts[5]).toContain("Status: 404");
    expect(texts[6]).toContain("localhost is a loopback name");
  });
});

describe("least privilege", () => {
  it("never runs a built-in the agent's settings leave off: the model is told, the log says tool_denied", async () => {
    const agent = defineAgent({ fileSystem: { read: true } });
    const id = await runTurn(agent, [
      toolUse("Write", { file_path: "x.txt", content: "should not exist" }),
      toolUse("Bash", { command: "echo hi > y.txt" }),
    ]);
    const results = await toolResults(id, 2);
    expect(results.every((r) => r.is_error)).toBe(true);
    expect(String(results[0]?.content)).toContain(
      'Tool "Write" is not available to this agent. Available tools: Read, Glob, Grep.',
    );
    const log = await events(id);
    expect(ofType(log, "tool_denied").map((e) => [e.payload.tool_name, e.payload.reason])).toEqual([
      ["Write", "not_allowed"],
      ["Bash", "not_allowed"],
    ]);
    expect(ofType(log, "tool_call_started")).toHaveLength(0);
    expect((await apiJson(`/v1/tasks/${id}/workspace`, WorkspaceListSchema)).files).toEqual([]);
  });
});

describe("allowedTools", () => {
  it("denies a built-in outside allowedTools with reason not_allowed, even when its capability is on", async () => {
    const agent = defineAgent({ allowedTools: ["Read"], fileSystem: { read: true, write: true } });
    const id = await runTurn(
      agent,
      [
        toolUse("Write", { file_path: "x.txt", content: "should not exist" }),
        toolUse("Read", { file_path: "seed.txt" }),
      ],
      { files: { "seed.txt": "s\n" } },
    );
    const results = await toolResults(id, 2);
    expect(results[0]).toMatchObject({
      is_error: true,
      content: 'Tool "Write" is not available to this agent. Available tools: Read.',
    });
    expect(results[1]).toMatchObject({ is_error: false, content: "     1\ts" });
    const log = await events(id);
    const denied = ofType(log, "tool_denied");
    expect(denied).toHaveLength(1);
    expect(denied[0]?.payload).toMatchObject({ tool_name: "Write", reason: "not_allowed", turn_index: 1 });
    expect(ofType(log, "tool_call_started").map((e) => e.payload.tool_name)).toEqual(["Read"]);
    await expectError(await workspaceFile(id, "x.txt"), 404, "workspace_file_not_found", "path");
  });
});

describe("the workspace survives an eviction", () => {
  it("keeps committed files, and a command interrupted by the eviction changes nothing before it runs again", async () => {
    const agent = defineAgent({ bash: { enabled: true }, fileSystem: { read: true, write: true } });
    const marker = uniqueMarker("ws-evict");
    await script(marker, [
      { content: [toolUse("Write", { file_path: "kept.txt", content: "committed\n" })], stop_reason: "tool_use" },
      {
        content: [toolUse("Bash", { command: "echo attempt >> log.txt && sleep 2 && echo end >> log.txt" })],
        stop_reason: "tool_use",
      },
      done,
    ]);
    const task = await startTask(agent, `evict ${marker}`);
    await waitForEvent(task.id, (e) => e.event_type === "tool_call_started" && e.payload.tool_name === "Bash");
    await new Promise((resolve) => setTimeout(resolve, 300));
    await abortAllDurableObjects();
    expect(await fireTimers(task.id, ["heartbeat"])).toBe(true);

    const finished = await waitForTask(task.id, 30);
    expect(finished.status).toBe("completed");
    expect(await (await workspaceFile(task.id, "kept.txt")).text()).toBe("committed\n");
    // The first attempt's append was never committed: the log has exactly one run of the command.
    expect(await (await workspaceFile(task.id, "log.txt")).text()).toBe("attempt\nend\n");
    const log = await events(task.id);
    expect(ofType(log, "step_resumed").map((e) => e.payload.attempt)).toEqual([2]);
    expect(ofType(log, "tool_call_completed").map((e) => e.payload.tool_name)).toEqual(["Write", "Bash"]);
  });
});

describe("workspace routes", () => {
  it("serves every file by the URL its listing gives, whatever characters its name has", async () => {
    const marker = uniqueMarker("ws-names");
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const names = ["a\nb.txt", "c\u2029d.txt", "sp ace #1?.txt", "per%cent.txt", "dir/ü.txt"];
    const task = await startTask("assistant", `names ${marker}`, {
      files: Object.fromEntries(names.map((n, i) => [n, `content ${i}`])),
    });
    await waitForTask(task.id);
    const listing = await apiJson(`/v1/tasks/${task.id}/workspace`, WorkspaceListSchema);
    for (const [i, name] of names.entries()) {
      const entry = listing.files.find((f) => f.path === name);
      if (entry?.type !== "file") throw new Error(`no listing entry for ${JSON.stringify(name)}`);
      const res = await api(new URL(entry.url).pathname);
      expect(res.status, JSON.stringify(name)).toBe(200);
      expect(await res.text()).toBe(`content ${i}`);
    }
  });

  it("validates seeded file paths, naming the offending entry", async () => {
    const outside = await api("/v1/agents/assistant/tasks", {
      method: "POST",
      body: JSON.stringify({ input: "x", files: { "../escape.txt": "x" } }),
    });
    await expectError(outside, 400, "validation_failed", "files.../escape.txt");
    const clash = await api("/v1/agents/assistant/tasks", {
      method: "POST",
      body: JSON.stringify({ input: "x", files: { a: "file", "a/b": "inside a file" } }),
    });
    await expectError(clash, 400, "validation_failed", "files.a");
    const same = await api("/v1/agents/assistant/tasks", {
      method: "POST",
      body: JSON.stringify({ input: "x", files: { "a.txt": "1", "/workspace/a.txt": "2" } }),
    });
    await expectError(same, 400, "validation_failed", "files./workspace/a.txt");
  });

  it("answers 404 for an unknown task, a missing file and a folder", async () => {
    await expectError(await api(`/v1/tasks/${crypto.randomUUID()}/workspace`), 404, "task_not_found", "id");
    await expectError(await api(`/v1/tasks/${crypto.randomUUID()}/workspace/a.txt`), 404, "task_not_found", "id");
    const marker = uniqueMarker("ws-routes");
    await script(marker, [done]);
    const task = await startTask("assistant", `files ${marker}`, { files: { "dir/a.txt": "a" } });
    await expectError(await workspaceFile(task.id, "nope.txt"), 404, "workspace_file_not_found", "path");
    await expectError(await workspaceFile(task.id, "dir"), 404, "workspace_file_not_found", "path");
    await expectError(await workspaceFile(task.id, `dir/${"x".repeat(1100)}`), 400, "validation_failed", "path");
    expect(await (await workspaceFile(task.id, "dir/a.txt")).text()).toBe("a");
  });

  it("never lets a traversal in the file path escape the workspace", async () => {
    const marker = uniqueMarker("ws-traversal");
    await script(marker, [done]);
    const task = await startTask("assistant", `files ${marker}`, { files: { "dir/a.txt": "a" } });
    const cases: [path: string, status: number, code: RequestErrorCode, field: string | undefined][] = [
      // Encoded "/" reaches the route as part of the path, which refuses anything that climbs out.
      ["..%2f..%2fx", 400, "validation_failed", "path"],
      ["%2e%2e%2fescape", 400, "validation_failed", "path"],
      ["dir/..%2f..%2fa.txt", 400, "validation_failed", "path"],
      ["%2fworkspace%2f..%2f..%2fetc%2fpasswd", 400, "validation_failed", "path"],
      ["%2fetc%2fpasswd", 400, "validation_failed", "path"],
      ["%00", 400, "validation_failed", "path"],
      // Dot segments, plain or encoded, are resolved by the URL parser before routing: the request names
      // another route (or another task id), never a file of this workspace or beyond it.
      ["../x", 404, "route_not_found", undefined],
      ["%2e%2e/x", 404, "route_not_found", undefined],
      [".%2E/x", 404, "route_not_found", undefined],
      ["%2e%2e", 404, "route_not_found", undefined],
      ["dir/..", 404, "route_not_found", undefined],
      ["%2e%2e/%2e%2e/x", 404, "task_not_found", "id"],
      ["dir/%2e%2e/%2e%2e/%2e%2e/x", 404, "task_not_found", "id"],
      // Double encoding is a literal name, which does not exist.
      ["%252e%252e%252fx", 404, "workspace_file_not_found", "path"],
    ];
    for (const [path, status, code, field] of cases) {
      const res = await api(`/v1/tasks/${task.id}/workspace/${path}`);
      expect({ path, status: res.status }).toEqual({ path, status });
      await expectError(res, status, code, field);
    }
    // A traversal that stays inside the workspace is just a path.
    const inside = await api(`/v1/tasks/${task.id}/workspace/dir/%2e%2e%2fdir/a.txt`);
    expect(inside.status).toBe(200);
    expect(await inside.text()).toBe("a");
  });

  it("serves files as sandboxed, unsniffed data, HTML included", async () => {
    const marker = uniqueMarker("ws-headers");
    await script(marker, [done]);
    const page = "<!doctype html><script>alert(document.cookie)</script>";
    const task = await startTask("assistant", `files ${marker}`, { files: { "page.html": page, "a.txt": "a" } });
    for (const [path, type, body] of [
      ["page.html", "text/html; charset=utf-8", page],
      ["a.txt", "text/plain; charset=utf-8", "a"],
    ] as const) {
      const res = await workspaceFile(task.id, path);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(type);
      expect(res.headers.get("x-content-type-options")).toBe("nosniff");
      const csp = res.headers.get("content-security-policy") ?? "";
      expect(csp.split(";").map((d) => d.trim())).toContain("sandbox");
      expect(csp).toContain("default-src 'none'");
      expect(res.headers.get("content-length")).toBe(String(body.length));
      expect(await res.text()).toBe(body);
    }
  });
});

describe("a 10 MB tool output", () => {
  it("completes the run: the model gets 30,000 characters, the bundle the whole output, no row near 2 MB", async () => {
    const agent = defineAgent({ bash: { enabled: true } });
    const line = "x".repeat(1999);
    const id = await runTurn(agent, [toolUse("Bash", { command: `for i in $(seq 1 5000); do echo "${line}"; done` })]);
    const [result] = await toolResults(id, 2);
    expect(String(result?.content).length).toBeLessThan(31_000);
    const artifact = await api(`/v1/tasks/${id}/artifacts/artifacts/turn_1_step-1_stdout.txt`);
    expect(artifact.status).toBe(200);
    expect((await artifact.text()).length).toBe(5000 * 2000);
    const largest = await runInDurableObject(env.TASKS.get(env.TASKS.idFromName(id)), (_i, state) => {
      let max = 0;
      const tables = state.storage.sql
        .exec<{ name: string }>(
          "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
        )
        .toArray();
      for (const { name } of tables) {
        const columns = state.storage.sql
          .exec<{ name: string }>(`SELECT name FROM pragma_table_info('${name}')`)
          .toArray();
        for (const column of columns) {
          const row = state.storage.sql
            .exec<{ n: number | null }>(`SELECT MAX(LENGTH(CAST("${column.name}" AS BLOB))) AS n FROM "${name}"`)
            .one();
          max = Math.max(max, row.n ?? 0);
        }
      }
      return max;
    });
    expect(largest).toBeLessThan(1024 * 1024);
  });
});
