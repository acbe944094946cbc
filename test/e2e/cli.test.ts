// The `outpost` CLI (docs/cli.md) against the Worker under `wrangler dev`, spawned as a user runs it: with pipes, as a
// script sees it (exit codes, --json), and under a pseudo-terminal (util-linux `script`) for what it asks a person
// inline (an approval during `run`, a `chat`). The model's replies are scripted in the emulator.
import { execFileSync } from "node:child_process";
import { mkdtemp, readdir, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { formatCost, formatCount } from "../../client/src/cli/output.ts";
import type { OutpostEvent, Task } from "../../client/src/index.ts";
import { runCli, runCliInTerminal } from "./support/cli.ts";
import { cuttingProxy } from "./support/cutting-proxy.ts";
import { e2eClient, marker, scriptModel } from "./support/harness.ts";
import { E2E_AGENTS_KEY } from "./support/keys.ts";

const TASK_ID = /task ([0-9a-f-]{36})/;

function taskIdIn(text: string): string {
  const id = TASK_ID.exec(text)?.[1];
  if (!id) throw new Error(`no task id in: ${text}`);
  return id;
}

async function eventsOf(id: string): Promise<OutpostEvent[]> {
  const seen: OutpostEvent[] = [];
  for await (const event of e2eClient().tasks.events(id)) seen.push(event);
  return seen;
}

/** The summary line the CLI ends a followed run with, from the task as the API shows it. */
function summaryOf(task: Task, calls: number, extra = ""): string {
  const usage = task.usage as { total_tokens: number; total_cost_usd: number | null };
  return `✓ completed · ${calls} model call${calls === 1 ? "" : "s"} · ${formatCount(usage.total_tokens)} tokens · ${formatCost(usage.total_cost_usd)}${extra} · task ${task.id}`;
}

/** A triage run (agents/triage.yaml: TodoWrite waits for a person) scripted to a first call and an answer. */
async function scriptTriage(name: string): Promise<string> {
  const m = marker(name);
  await scriptModel(m, [
    {
      content: [
        { type: "tool_use", name: "TodoWrite", input: { todos: [{ content: "Reproduce it", status: "pending" }] } },
      ],
    },
    { content: [{ type: "text", text: "Likely a null session. Reproduce it first." }] },
  ]);
  return `The login page crashes ${m}`;
}

describe("the outpost CLI", () => {
  it("lists the agents the key may run, as a table and as one JSON document with --json", async () => {
    const listed = await e2eClient().agents.list();
    const table = await runCli(["agents"]);
    expect(table.code).toBe(0);
    const [head, ...rows] = table.stdout.trimEnd().split("\n");
    expect(head).toMatch(/^NAME +MODEL +DESCRIPTION$/);
    expect(rows.map((row) => row.split(" ")[0])).toEqual(listed.agents.map((agent) => agent.name));

    const json = await runCli(["agents", "--json"]);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual(listed);
  });

  it("runs a task and follows it: the text as it streams, the tool call and its result, then the cost", async () => {
    const m = marker("cli-run");
    await scriptModel(m, [
      {
        content: [
          { type: "text", text: "Planning." },
          { type: "tool_use", name: "TodoWrite", input: { todos: [{ content: "Buy bread", status: "pending" }] } },
        ],
      },
      { content: [{ type: "text", text: "1. Buy bread\nStart at the bakery." }] },
    ]);
    const run = await runCli(["run", "planner", `Plan a picnic ${m}`]);

    expect(run.code).toBe(0);
    const task = await e2eClient().tasks.get(taskIdIn(run.stderr));
    expect(task.usage.total_cost_usd).toBeGreaterThan(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines.slice(0, 3)).toEqual(["Planning.", "→ TodoWrite (1 item)", "  ☐ Buy bread"]);
    expect(lines[3]).toMatch(/^← TodoWrite: Task list saved: 1 items, 0 completed\. \d+ ms$/);
    expect(lines.slice(4)).toEqual(["1. Buy bread", "Start at the bakery.", summaryOf(task, 2)]);
    expect(run.stderr).toBe(`planner · task ${task.id}\n`);
  });

  it("ends with the share of the input read from the prompt cache when the run wrote or read it", async () => {
    // 200 tokens uncached, 1,200 written to the cache, 8,600 read from it: 8,600 of 10,000 input tokens, 86%.
    const m = marker("cli-cache");
    const usage = {
      input_tokens: 200,
      output_tokens: 10,
      cache_creation_input_tokens: 1200,
      cache_read_input_tokens: 8600,
    };
    await scriptModel(m, [{ content: [{ type: "text", text: "From the cache." }], usage }]);
    const run = await runCli(["run", "assistant", `Answer ${m}`]);
    expect(run.code).toBe(0);
    const task = await e2eClient().tasks.get(taskIdIn(run.stderr));
    expect(task.usage).toMatchObject({
      input_tokens: 200,
      cache_creation_input_tokens: 1200,
      cache_read_input_tokens: 8600,
    });
    expect(run.stdout).toBe(
      `From the cache.\n✓ completed · 1 model call · 10,010 tokens · cache 86% · ${formatCost(task.usage.total_cost_usd)} · task ${task.id}\n`,
    );

    // A run that wrote the cache and read none of it: 0%, which says the writes have not paid off yet.
    const w = marker("cli-cache-write");
    const writes = { input_tokens: 30, output_tokens: 5, cache_creation_input_tokens: 4000 };
    await scriptModel(w, [{ content: [{ type: "text", text: "Written." }], usage: writes }]);
    const first = await runCli(["run", "assistant", `Answer ${w}`]);
    const written = await e2eClient().tasks.get(taskIdIn(first.stderr));
    const watched = await runCli(["watch", written.id]);
    expect(watched.stdout.trimEnd().split("\n").at(-1)).toBe(
      `✓ completed · 1 model call · 4,035 tokens · cache 0% · ${formatCost(written.usage.total_cost_usd)} · task ${written.id}`,
    );
  });

  it("creates and follows a task in one request, and a dropped stream loses nothing of what it prints", async () => {
    const m = marker("cli-run-cut");
    const text = Array.from({ length: 40 }, (_, i) => `word${i}`).join(" ");
    await scriptModel(m, [{ content: [{ type: "text", text }] }], { token_delay_ms: 15 });
    const proxy = await cuttingProxy(1, 5);
    const run = await runCli(["run", "assistant", `Write many words ${m}`], { url: proxy.url });

    expect(run.code).toBe(0);
    const task = await e2eClient().tasks.get(taskIdIn(run.stderr));
    // The creating POST answered with the task's events; cut after five frames, they went on from GET …/events.
    expect(proxy.connections.map((c) => c.method)).toEqual(["POST", "GET"]);
    expect(Number(proxy.connections[1]?.lastEventId)).toBeGreaterThanOrEqual(5);
    expect(run.stdout.trimEnd().split("\n")).toEqual([text, summaryOf(task, 1)]);
    expect(run.stderr).toBe(`assistant · task ${task.id}\n`);
  });

  it("prints a run as JSON lines with --json: every event of the task in order, then the task", async () => {
    const m = marker("cli-json");
    await scriptModel(m, [{ content: [{ type: "text", text: "Hello from the model." }] }]);
    const run = await runCli(["run", "assistant", `Say hello ${m}`, "--wait", "--json"]);

    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    const lines = run.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as unknown);
    const task = lines.at(-1) as Task;
    expect(task).toMatchObject({ status: "completed", result: "Hello from the model." });
    expect(lines.slice(0, -1)).toEqual(await eventsOf(task.id));
  });

  it("shows a sub-agent's run indented under the delegation, and the tree's usage at the end", async () => {
    // A tenant's own agent, under a tenant of its own (E2E_AGENTS_KEY), so no other test's agent listing sees it.
    const outpost = e2eClient(E2E_AGENTS_KEY);
    await outpost.request("PUT", "/v1/agents/cli_lead", {
      body: {
        name: "cli_lead",
        description: "Delegates to the assistant.",
        instructions: "Delegate the question with Task.",
        claude: { subagents: { enabled: true, agents: ["assistant"] } },
      },
    });
    const m = marker("cli-lead");
    const child = marker("cli-child");
    await scriptModel(m, [
      {
        content: [
          { type: "tool_use", name: "Task", input: { agent: "assistant", description: "Look it up", prompt: child } },
        ],
      },
      { content: [{ type: "text", text: "The answer is 42." }] },
    ]);
    await scriptModel(child, [{ content: [{ type: "text", text: "42" }] }]);
    const run = await runCli(["run", "cli_lead", `What is the answer? ${m}`, "--wait"], { key: E2E_AGENTS_KEY });

    expect(run.code).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines.slice(0, 3)).toEqual(["↳ assistant Look it up", "  42", "↲ assistant completed"]);
    expect(lines[3]).toMatch(/^← Task: 42 \d+ ms$/);
    expect(lines[4]).toBe("The answer is 42.");
    // Three model calls over the tree: the lead's two and the assistant's one.
    expect(lines[5]).toMatch(
      /^✓ completed · 3 model calls · [\d,]+ tokens · \$[\d.]+ · 1 sub-agent · task [0-9a-f-]{36}$/,
    );
    expect(lines).toHaveLength(6);
  });

  it("without a terminal, leaves a waiting call to `approve` (exit 5); `watch` then follows the run to its end", async () => {
    const outpost = e2eClient();
    const run = await runCli(["run", "triage", await scriptTriage("cli-approve"), "--wait"]);

    expect(run.code).toBe(5);
    const id = taskIdIn(run.stderr);
    const waiting = await outpost.tasks.get(id);
    expect(waiting.status).toBe("input_required");
    const requestId = waiting.pending_input?.request_id;
    expect(run.stderr).toContain(`Task ${id} waits for a person. Answer it with:\n  outpost approve ${id}\n`);

    const approved = await runCli(["approve", id]);
    expect(approved).toEqual({
      code: 0,
      stdout: `✓ approved TodoWrite (request ${requestId})\n`,
      stderr: `follow it: outpost watch ${id}\n`,
    });

    const watched = await runCli(["watch", id]);
    expect(watched.code).toBe(0);
    const decisions = (await eventsOf(id)).filter((e) => e.event_type === "human_decision");
    expect(decisions.map((e) => [e.payload.request_id, e.payload.action])).toEqual([[requestId, "approve"]]);
    const lines = watched.stdout.trimEnd().split("\n");
    expect(lines.slice(0, 2)).toEqual([
      "? TodoWrite waits for approval (1 item)",
      `✓ approved by ${String(decisions[0]?.payload.decided_by)}`,
    ]);
    expect(lines.slice(-2)).toEqual([
      "Likely a null session. Reproduce it first.",
      summaryOf(await outpost.tasks.get(id), 2),
    ]);
  });

  it("on a terminal, asks to approve a waiting call inline during `run` and goes on once approved", async () => {
    const terminal = runCliInTerminal(["run", "triage", await scriptTriage("cli-inline"), "--wait"]);
    await terminal.waitFor(/Run TodoWrite\?/);
    terminal.type("\r"); // the confirm's default: Yes

    expect(await terminal.exited).toBe(0);
    const id = taskIdIn(terminal.screen());
    const task = await e2eClient().tasks.get(id);
    expect(task.status).toBe("completed");
    expect(terminal.screen()).toContain(summaryOf(task, 2));
    const decisions = (await eventsOf(id)).filter((e) => e.event_type === "human_decision");
    expect(decisions.map((e) => e.payload.action)).toEqual(["approve"]);
  });

  it("with --detach, prints the new task's id only; `cancel` stops it and `watch` then ends with exit 1", async () => {
    const m = marker("cli-cancel");
    // A slow first token: the task still runs when it is canceled.
    await scriptModel(m, [{ content: [{ type: "text", text: "Too late." }] }], { ttft_ms: 10_000 });
    const both = await runCli(["run", "assistant", `Take your time ${m}`, "--detach", "--wait"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("cannot be used with option '-w, --wait'");
    const run = await runCli(["run", "assistant", `Take your time ${m}`, "--detach"]);
    expect(run.code).toBe(0);
    const id = run.stdout.trim();
    expect(run.stdout).toBe(`${id}\n`);
    expect(run.stderr).toBe(`assistant · pending · follow it: outpost watch ${id}\n`);

    const canceled = await runCli(["cancel", id]);
    expect(canceled).toEqual({ code: 0, stdout: `canceled ${id}\n`, stderr: "" });
    expect((await e2eClient().tasks.get(id)).status).toBe("canceled");

    const watched = await runCli(["watch", id]);
    expect(watched.code).toBe(1);
    expect(watched.stdout.trimEnd().split("\n").slice(-2)).toEqual([
      "canceled",
      `✗ canceled · 0 model calls · 0 tokens · $0 · task ${id}`,
    ]);
  });

  it("shows a task that waits out its model provider: `tasks` says until when, `watch` the wait and the next try", async () => {
    const m = marker("cli-provider-wait");
    const tag = `waits-${crypto.randomUUID().slice(0, 8)}`;
    // Refused with a retry-after long enough to park the call on its timer (docs/provider-waits.md), then answered.
    const overloaded = { kind: "http", status: 529, retry_after: 8 };
    await scriptModel(m, [{ content: [{ type: "text", text: "After the outage." }], faults: [overloaded] }]);
    const run = await runCli(["run", "assistant", `Answer ${m}`, "--tag", tag, "--detach"]);
    expect(run.code).toBe(0);
    const id = run.stdout.trim();

    // The listing follows the task within about a second.
    let listed = "";
    for (let i = 0; i < 50 && !listed.includes("waiting"); i++) {
      if (i > 0) await new Promise((resolve) => setTimeout(resolve, 100));
      listed = (await runCli(["tasks", "--tag", tag])).stdout;
    }
    const waiting = (await e2eClient().tasks.get(id)).waiting_for;
    const at = waiting?.until.slice(11, 19);
    const [head, row] = listed.trimEnd().split("\n");
    expect(head?.split(/\s{2,}/)).toEqual(["ID", "AGENT", "STATUS", "CREATED (UTC)", "COST"]);
    expect(row?.split(/\s{2,}/).slice(0, 3)).toEqual([
      id,
      "assistant",
      `running · waiting for the model provider until ${at} UTC (1 try; provider_overloaded)`,
    ]);

    const watched = await runCli(["watch", id]);
    expect(watched.code).toBe(0);
    const task = await e2eClient().tasks.get(id);
    const failed = (await eventsOf(id)).find((e) => e.event_type === "llm_request_failed");
    expect(watched.stdout.trimEnd().split("\n")).toEqual([
      `model call failed: ${(failed?.payload.error as { message?: string } | undefined)?.message}`,
      `… waiting for the model provider until ${at} UTC (1 try; provider_overloaded)`,
      "trying the model provider again",
      "After the outage.",
      summaryOf(task, 1),
    ]);
  });

  it("forks a task from its latest checkpoint with a new message, and follows the fork", async () => {
    const m = marker("cli-fork");
    await scriptModel(m, [
      { content: [{ type: "text", text: "First answer." }] },
      { content: [{ type: "text", text: "Second answer." }] },
    ]);
    // The planner (max_turns 4): the fork's new turn counts on from the original's.
    const first = await runCli(["run", "planner", `Answer twice ${m}`, "--wait"]);
    expect(first.code).toBe(0);
    const origin = taskIdIn(first.stderr);
    const { checkpoints } = await e2eClient().request<{ checkpoints: { checkpoint_id: string }[] }>(
      "GET",
      `/v1/tasks/${origin}/checkpoints`,
    );

    const fork = await runCli(["fork", origin, "--message", "And then?", "--wait"]);
    expect(fork.code).toBe(0);
    expect(fork.stderr.split("\n")[0]).toBe(`forked from ${origin} at ${checkpoints.at(-1)?.checkpoint_id}`);
    const forked = await e2eClient().tasks.get(taskIdIn(fork.stderr.split("\n")[1] ?? ""));
    expect(forked).toMatchObject({ parent_task_id: origin, status: "completed", result: "Second answer." });
    expect(fork.stdout).toBe(`Second answer.\n${summaryOf(forked, 1)}\n`);
  });

  it("downloads a task's artifacts into a folder, each file at its bundle path", async () => {
    const m = marker("cli-artifacts");
    await scriptModel(m, [{ content: [{ type: "text", text: "Bundled." }] }]);
    const run = await runCli(["run", "assistant", `Make a bundle ${m}`, "--wait"]);
    const id = taskIdIn(run.stderr);
    const folder = await mkdtemp(join(tmpdir(), "outpost-cli-"));

    const download = await runCli(["artifacts", id, "--download", folder, "--json"]);
    expect(download.code).toBe(0);
    const { artifacts } = await e2eClient().request<{ artifacts: { path: string }[] }>(
      "GET",
      `/v1/tasks/${id}/artifacts`,
    );
    const saved = (await readdir(folder, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => relative(folder, join(entry.parentPath, entry.name)))
      .sort();
    expect(saved).toEqual(artifacts.map((a) => a.path).sort());
    expect(saved).toContain("final_summary.md");
    const served = await e2eClient().send("GET", `/v1/tasks/${id}/artifacts/final_summary.md`);
    expect(await readFile(join(folder, "final_summary.md"), "utf8")).toBe(await served.text());
  });

  it("saves a task's whole bundle as one tar file that the system's tar opens", async () => {
    const m = marker("cli-tar");
    await scriptModel(m, [{ content: [{ type: "text", text: "Archived." }] }]);
    const run = await runCli(["run", "assistant", `Make an archive ${m}`, "--wait"]);
    const id = taskIdIn(run.stderr);
    const file = join(await mkdtemp(join(tmpdir(), "outpost-cli-")), "run.tar");

    const saved = await runCli(["artifacts", id, "--tar", file, "--json"]);
    expect(saved.code).toBe(0);
    const { size } = JSON.parse(saved.stdout) as { size: number };
    expect((await readFile(file)).byteLength).toBe(size);
    const { artifacts } = await e2eClient().request<{ artifacts: { path: string }[] }>(
      "GET",
      `/v1/tasks/${id}/artifacts`,
    );
    const names = execFileSync("tar", ["-tf", file], { encoding: "utf8" }).trimEnd().split("\n");
    expect(names[0]).toBe("bundle.json");
    expect(names.sort()).toEqual(artifacts.map((a) => a.path).sort());
    const summary = execFileSync("tar", ["-xOf", file, "final_summary.md"], { encoding: "utf8" });
    expect(summary).toContain("Archived.");
    const both = await runCli(["artifacts", id, "--tar", file, "--download", file]);
    expect(both.code).toBe(2);
  });

  it("creates, lists, pauses, resumes and deletes a schedule, and refuses --cron with --at", async () => {
    const input = `Weekly plan ${marker("cli-schedule")}`;
    const created = await runCli([
      "schedules",
      "create",
      "planner",
      input,
      "--cron",
      "0 9 * * 1",
      "--timezone",
      "Europe/Paris",
      "--json",
    ]);
    expect(created.code).toBe(0);
    const schedule = JSON.parse(created.stdout) as { id: string; status: string; cron: string; timezone: string };
    expect([schedule.status, schedule.cron, schedule.timezone]).toEqual(["active", "0 9 * * 1", "Europe/Paris"]);
    const listed = JSON.parse((await runCli(["schedules", "--json"])).stdout) as { schedules: { id: string }[] };
    expect(listed.schedules.map((s) => s.id)).toContain(schedule.id);
    const table = await runCli(["schedules"]);
    expect(table.stdout).toMatch(new RegExp(`${schedule.id}\\s+planner\\s+active\\s+0 9 \\* \\* 1 \\(Europe/Paris\\)`));

    const paused = JSON.parse((await runCli(["schedules", "pause", schedule.id, "--json"])).stdout);
    expect(paused.status).toBe("paused");
    const resumed = JSON.parse((await runCli(["schedules", "resume", schedule.id, "--json"])).stdout);
    expect(resumed.status).toBe("active");
    const deleted = await runCli(["schedules", "delete", schedule.id]);
    expect([deleted.code, deleted.stdout]).toEqual([0, `✓ deleted ${schedule.id}\n`]);
    const gone = await e2eClient()
      .schedules.get(schedule.id)
      .then(
        () => null,
        (error: unknown) => (error as { code?: string }).code,
      );
    expect(gone).toBe("schedule_not_found");

    const both = await runCli([
      "schedules",
      "create",
      "planner",
      input,
      "--cron",
      "0 9 * * 1",
      "--at",
      "2030-01-01T00:00:00Z",
    ]);
    expect(both.code).toBe(2);
  });

  it("replays a task from its recorded answers, following it live, and says nothing differs", async () => {
    const m = marker("cli-replay");
    await scriptModel(m, [{ content: [{ type: "text", text: "Recorded answer." }] }]);
    const run = await runCli(["run", "assistant", `Answer once ${m}`, "--wait"]);
    const id = taskIdIn(run.stderr);

    const replay = await runCli(["replay", id]);
    expect(replay.code).toBe(0);
    expect(replay.stdout.split("\n")[0]).toBe("Recorded answer.");
    expect(replay.stderr).toContain(`replaying ${id}`);
    expect(replay.stderr).toContain(`✓ nothing differs from ${id}`);
    const replayId = taskIdIn(replay.stderr.split("\n").slice(1).join("\n"));
    expect((await e2eClient().tasks.get(replayId)).trigger).toEqual({ kind: "replay", task_id: id });
  });

  it("replays a downloaded bundle, and one the system's tar made of its extracted folder, saying nothing differs", async () => {
    const m = marker("cli-replay-bundle");
    await scriptModel(m, [{ content: [{ type: "text", text: "Bundled answer." }] }]);
    const run = await runCli(["run", "assistant", `Answer for the bundle ${m}`, "--wait"]);
    const id = taskIdIn(run.stderr);
    const folder = await mkdtemp(join(tmpdir(), "outpost-cli-"));
    const file = join(folder, "run.tar");
    expect((await runCli(["artifacts", id, "--tar", file])).code).toBe(0);

    const replay = await runCli(["replay", "--bundle", file]);
    expect(replay.code).toBe(0);
    expect(replay.stdout.split("\n")[0]).toBe("Bundled answer.");
    expect(replay.stderr).toContain(`replaying ${id} from ${file}`);
    expect(replay.stderr).toContain(`✓ nothing differs from ${id}`);
    const replayId = taskIdIn(replay.stderr.split("\n").slice(1).join("\n"));
    expect((await e2eClient().tasks.get(replayId)).trigger).toEqual({ kind: "replay", task_id: id, source: "bundle" });

    // GNU tar's own archive of the extracted run directory (./ paths, a folder entry) replays the same.
    const extracted = join(folder, "run");
    execFileSync("mkdir", [extracted]);
    execFileSync("tar", ["-xf", file, "-C", extracted]);
    const retarred = join(folder, "retarred.tar");
    execFileSync("tar", ["-cf", retarred, "-C", extracted, "."]);
    const again = await runCli(["replay", "--bundle", retarred, "--detach"]);
    expect(again.code).toBe(0);
    const againId = again.stdout.trim();
    expect((await e2eClient().wait(againId)).result).toBe("Bundled answer.");
    expect((await e2eClient().tasks.compareReplay(againId)).identical).toBe(true);

    const both = await runCli(["replay", id, "--bundle", file]);
    expect([both.code, both.stderr]).toEqual([
      2,
      "error usage: Give the task to replay, or --bundle <file>, not both.\n",
    ]);
  });

  it("reports a refused key with the API's error code and exit code 3, and never prints the key", async () => {
    const key = "not-a-key-3f9c";
    const refusal = (await e2eClient(key)
      .agents.list()
      .then(
        () => undefined,
        (error: unknown) => error,
      )) as Error & { field: string };

    const text = await runCli(["agents"], { key });
    expect(text).toEqual({
      code: 3,
      stdout: "",
      stderr: `error unauthorized: ${refusal.message} (${refusal.field})\nCheck the API key (OUTPOST_API_KEY or --api-key).\n`,
    });

    const json = await runCli(["tasks", "--json"], { key });
    expect(json.code).toBe(3);
    expect(JSON.parse(json.stderr)).toEqual({
      error: { code: "unauthorized", message: refusal.message, status: 401, field: refusal.field },
    });
    expect(text.stderr + json.stderr).not.toContain(key);
  });

  it("chats on a terminal: each reply streamed after the prompt, the session closed on leaving", async () => {
    const m = marker("cli-chat");
    await scriptModel(m, [
      { content: [{ type: "text", text: "Hi, how can I help?" }] },
      { content: [{ type: "text", text: "Bring a blanket." }] },
    ]);
    const terminal = runCliInTerminal(["chat", "assistant"]);
    await terminal.waitFor(/◆ +You/);
    terminal.type(`Hello ${m}\r`);
    await terminal.waitFor(/Hi, how can I help\?[\s\S]*◆ +You/);
    terminal.type("What should I bring?\r");
    await terminal.waitFor(/Bring a blanket\.[\s\S]*◆ +You/);
    terminal.type("\x03"); // Ctrl-C at the prompt, once it is back: leave

    expect(await terminal.exited).toBe(0);
    const sessionId = /session ([0-9a-f-]{36})/.exec(terminal.screen())?.[1] ?? "";
    const session = await e2eClient().sessions.get(sessionId);
    expect(session).toMatchObject({
      status: "closed",
      history: [
        { role: "user", content: `Hello ${m}` },
        { role: "assistant", content: "Hi, how can I help?" },
        { role: "user", content: "What should I bring?" },
        { role: "assistant", content: "Bring a blanket." },
      ],
    });
    const cost = (session.usage as { total_cost_usd: number | null }).total_cost_usd;
    expect(terminal.screen()).toContain(`session closed · 2 turns · ${formatCost(cost)}`);
  });
});

describe("outpost test", () => {
  it("runs the planner's shipped test cases against the emulator's default replies and exits 0 when all pass", async () => {
    const run = await runCli(["test", "planner"]);

    expect(run.code).toBe(0);
    const id = /evaluation ([0-9a-f-]{36}): 2 runs/.exec(run.stderr)?.[1] ?? "";
    const evaluation = await e2eClient().evaluations.get(id);
    expect(evaluation).toMatchObject({ agent: "planner", status: "completed", passed: true });
    const lines = run.stdout.trimEnd().split("\n");
    // Runs are shown as they are graded, in whatever order they end.
    expect(lines.slice(0, 2).sort()).toEqual(["✓ move (3 metrics)", "✓ picnic (3 metrics)"]);
    expect(lines.slice(2)).toEqual([
      "",
      "METRIC          TYPE        THRESHOLD  PASSED  MEAN",
      "tool_calls      tool_calls  1          100%    1",
      "mentions_steps  regex       1          100%    1",
      "plan_quality    g_eval      0.6        100%    0.8",
      "",
      `✓ passed · 2 of 2 runs passed · ${formatCost(evaluation.summary.cost_usd)} · evaluation ${id}`,
    ]);
  });

  it("runs the shipped router's cases with every metric kind against the emulator's default replies and exits 0", async () => {
    const run = await runCli(["test", "router"]);

    expect(run.code).toBe(0);
    // Three cases, and the faulted one's run without its faults.
    const id = /evaluation ([0-9a-f-]{36}): 4 runs/.exec(run.stderr)?.[1] ?? "";
    const evaluation = await e2eClient().evaluations.get(id);
    expect(evaluation).toMatchObject({ agent: "router", status: "completed", passed: true });
    const lines = run.stdout.trimEnd().split("\n");
    // The faulted case's line comes with its comparison: the object reset after the Read, the answer's first
    // attempt refused 529, and still the same answer, tool effects, calls and tokens as without the faults.
    const faulted = lines.indexOf("✓ double_charge_faulted (8 metrics)");
    expect(lines[faulted + 1]).toMatch(
      /^ {4}fault: evict_after_step evict, model_fault 529: same answer and tool effects as without it; \+?0 model calls, \+?0 tokens, [+-]?\d+ ms$/,
    );
    lines.splice(faulted, 2);
    expect(lines.slice(0, 2).sort()).toEqual(["✓ double_charge (8 metrics)", "✓ invoice (8 metrics)"]);
    expect(lines.slice(2)).toEqual([
      "",
      "METRIC           TYPE         THRESHOLD  PASSED  MEAN",
      "exact_match      exact_match  1          100%    1",
      "contains         contains     1          100%    1",
      "names_a_team     regex        1          100%    1",
      "json_schema      json_schema  1          100%    1",
      "tool_calls       tool_calls   1          100%    1",
      "bleu             bleu         0.9        100%    1",
      "rouge_l          rouge_l      0.9        100%    1",
      "routing_quality  g_eval       0.6        100%    0.8",
      "",
      `✓ passed · 3 of 3 runs passed · ${formatCost(evaluation.summary.cost_usd)} · evaluation ${id}`,
    ]);
  });

  it("exits 1 naming the metrics a run of the router's cases misses, when its model routes to the wrong team", async () => {
    // The shipped file as a tenant's own agent, with a marker in its instructions (the system prompt) so that the
    // emulator answers its runs, and not the grader's calls, with the script.
    const m = marker("cli-router");
    const file = parseYaml(await readFile(resolve(import.meta.dirname, "../../agents/router.yaml"), "utf8")) as {
      instructions: string;
    };
    const outpost = e2eClient(E2E_AGENTS_KEY);
    await outpost.request("PUT", "/v1/agents/cli_router", {
      body: { ...file, name: "cli_router", instructions: `${file.instructions} ${m}` },
    });
    await scriptModel(m, [
      { content: [{ type: "tool_use", name: "Read", input: { file_path: "routing.md" } }] },
      { content: [{ type: "text", text: '{"team":"technical"}' }] },
    ]);

    const run = await runCli(["test", "cli_router", "--case", "smoke"], { key: E2E_AGENTS_KEY });
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split("\n");
    // BLEU of [team, technical] against [team, billing]: p1 = 1/2, p2 = (0+1)/(1+1), p3 = p4 = 1 (smoothed), so
    // (1/4)^(1/4) = 0.707; ROUGE-L: an LCS of one word in two.
    expect(lines.slice(0, 5)).toEqual([
      "✗ double_charge: below threshold: exact_match 0 < 1, contains 0 < 1, bleu 0.707 < 0.9, rouge_l 0.5 < 0.9",
      '    exact_match 0 < 1: the response differs from the expected output: "{\\"team\\":\\"technical\\"}"',
      '    contains 0 < 1: the response does not contain "{\\"team\\":\\"billing\\"}"',
      "    bleu 0.7071067811865476 < 0.9: BLEU-4 0.707 against the reference",
      "    rouge_l 0.5 < 0.9: ROUGE-L F1 0.5 against the reference",
    ]);
    expect(lines.at(-1)).toMatch(/^✗ failed · 0 of 1 runs passed · .+ · evaluation [0-9a-f-]{36}$/);
  });

  it("exits 1 when a run misses a threshold, naming the case and the metric; --json gives each run, then the evaluation", async () => {
    const outpost = e2eClient(E2E_AGENTS_KEY);
    const m = marker("cli-test");
    await outpost.request("PUT", "/v1/agents/cli_evals", {
      body: {
        name: "cli_evals",
        instructions: "Answer in one word.",
        test_cases: [
          { name: "capital", input: `Capital of France? ${m}-capital`, expected_output: "Paris" },
          { name: "colour", input: `Colour of the sky? ${m}-colour`, expected_output: "Blue", tags: ["sky"] },
        ],
        evaluations: { metrics: [{ type: "contains" }] },
      },
    });
    await scriptModel(`${m}-capital`, [{ content: [{ type: "text", text: "Paris" }] }]);
    await scriptModel(`${m}-colour`, [{ content: [{ type: "text", text: "Green" }] }]);

    const run = await runCli(["test", "cli_evals"], { key: E2E_AGENTS_KEY });
    expect(run.code).toBe(1);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines.slice(0, 3).sort()).toEqual([
      '    contains 0 < 1: the response does not contain "Blue"',
      "✓ capital (1 metrics)",
      "✗ colour: below threshold: contains 0 < 1",
    ]);
    expect(lines.at(-1)).toMatch(/^✗ failed · 1 of 2 runs passed · .+ · evaluation [0-9a-f-]{36}$/);

    const json = await runCli(["test", "cli_evals", "--case", "sky", "--json"], { key: E2E_AGENTS_KEY });
    expect(json.code).toBe(1);
    const docs = json.stdout
      .trimEnd()
      .split("\n")
      .map((line) => JSON.parse(line) as { type: string; case?: string; passed?: boolean; id?: string });
    expect(docs.map((d) => [d.type, d.case ?? null, d.passed])).toEqual([
      ["run", "colour", false],
      ["evaluation", null, false],
    ]);
    expect(await outpost.evaluations.get(docs[1]?.id ?? "")).toMatchObject({ selection: ["sky"], passed: false });
  });
});
