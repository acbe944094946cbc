// The run bundle over HTTP: GET /v1/tasks/:id/artifacts and each file under it, after runs that completed, failed
// and were canceled. Contents are checked against the run itself: the events against the SSE stream, the summary
// against the result, the request artifact against the agent's definition.

import { describe, expect, it } from "vitest";
import { registry } from "../../src/agents/catalog.ts";
import { type ArtifactList, ArtifactListSchema, type TaskResource } from "../../src/http/responses.ts";
import { BUNDLE_FORMAT_VERSION, type BundleManifest } from "../../src/run-bundle/run-bundle.ts";
import { readTar } from "../../src/run-bundle/tar.ts";
import {
  api,
  BASE,
  defineAgent,
  expectError,
  parseBody,
  parseEvent,
  readSse,
  type ScriptTurn,
  script,
  startTask,
  toolUse,
  UUID_V4,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";
import { runsBucket } from "../support/runs-bucket.ts";

const ASSISTANT_PROMPT = registry.create("assistant").systemPrompt;

/** Runs `agent` on a fresh script to its end. */
async function run(agent: string, turns: ScriptTurn[]): Promise<{ task: TaskResource; input: string }> {
  const marker = uniqueMarker(`bundle-${agent}`);
  await script(marker, turns);
  const input = `Bundle this ${marker}`;
  const started = await startTask(agent, input);
  return { task: await waitForTask(started.id), input };
}

async function listing(id: string): Promise<ArtifactList> {
  const res = await api(`/v1/tasks/${id}/artifacts`);
  expect(res.status).toBe(200);
  return parseBody(res, ArtifactListSchema);
}

async function artifact(id: string, path: string): Promise<string> {
  const res = await api(`/v1/tasks/${id}/artifacts/${path}`);
  expect(res.status).toBe(200);
  return new TextDecoder().decode(await res.arrayBuffer());
}

const ONE_TURN: ScriptTurn[] = [{ content: [{ type: "text", text: "The bundled answer." }] }];
const turnFiles = (turn: number) => [
  `artifacts/llm/decision_loop_turn_${turn}_attempt_1_request.txt`,
  `artifacts/llm/decision_loop_turn_${turn}_attempt_1_response.txt`,
];
/** The files written when a run ends: seed 002's and seed 003's. */
const endOfRunFiles = () => [
  "bundle.json",
  "checkpoints.json",
  "events.jsonl",
  "final_summary.md",
  "llm_transcript.log",
  "task.json",
  "trace.json",
];

describe("GET /v1/tasks/:id/artifacts", () => {
  it("lists the request, response and end-of-run files of a one-turn run", async () => {
    const { task } = await run("assistant", ONE_TURN);
    const body = await listing(task.id);
    expect(body.task_id).toBe(task.id);
    expect(body.artifacts.map((a) => a.path)).toStrictEqual([...turnFiles(1), ...endOfRunFiles()]);
  });

  it("lists both turns' request and response files of a two-turn run", async () => {
    const { task } = await run("planner", [
      {
        content: [{ type: "tool_use", name: "TodoWrite", input: { todos: [{ content: "Do it", status: "pending" }] } }],
      },
      { content: [{ type: "text", text: "1. Do it" }] },
    ]);
    expect(task.status).toBe("completed");
    const body = await listing(task.id);
    expect(body.artifacts.map((a) => a.path)).toStrictEqual([...turnFiles(1), ...turnFiles(2), ...endOfRunFiles()]);
  });

  it("gives every file a url under the task that serves it with the listed size and content type", async () => {
    const { task } = await run("assistant", ONE_TURN);
    const body = await listing(task.id);
    for (const entry of body.artifacts) {
      expect(entry.url).toBe(`${BASE}/v1/tasks/${task.id}/artifacts/${entry.path}`);
      const res = await api(entry.url.slice(BASE.length));
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(entry.content_type);
      expect((await res.arrayBuffer()).byteLength).toBe(entry.size);
    }
    expect(body.artifacts.map((a) => [a.path, a.content_type])).toStrictEqual([
      [turnFiles(1)[0], "text/plain; charset=utf-8"],
      [turnFiles(1)[1], "text/plain; charset=utf-8"],
      ["bundle.json", "application/json"],
      ["checkpoints.json", "application/json"],
      ["events.jsonl", "application/x-ndjson"],
      ["final_summary.md", "text/markdown; charset=utf-8"],
      ["llm_transcript.log", "text/plain; charset=utf-8"],
      ["task.json", "application/json"],
      ["trace.json", "application/json"],
    ]);
  });
});

describe("GET /v1/tasks/:id/artifacts/:path", () => {
  it("serves events.jsonl as EventRecords numbered from 1 that equal the SSE stream", async () => {
    const { task } = await run("assistant", ONE_TURN);
    const lines = (await artifact(task.id, "events.jsonl")).trimEnd().split("\n");
    const records = lines.map((line) => parseEvent(line));
    expect(records.map((r) => r.seq)).toStrictEqual(records.map((_, i) => i + 1));
    expect(records.at(-1)?.event_type).toBe("run_finished");
    const frames = await readSse(await api(`/v1/tasks/${task.id}/events`));
    expect(records).toStrictEqual(frames.map((f) => JSON.parse(f.data)));
  });

  it("serves final_summary.md with the status and the result", async () => {
    const { task } = await run("assistant", ONE_TURN);
    const summary = await artifact(task.id, "final_summary.md");
    expect(summary).toContain(`# Task ${task.id}`);
    expect(summary).toContain("- Status: completed");
    expect(summary).toContain("## Result\n\nThe bundled answer.\n");
  });

  it("serves the request artifact as the exact Messages API request: model, system prompt and input, each with its cache breakpoint", async () => {
    const { task, input } = await run("assistant", ONE_TURN);
    const request = JSON.parse(await artifact(task.id, turnFiles(1)[0] as string));
    expect(request).toStrictEqual({
      model: "claude-sonnet-5-5",
      max_tokens: 4096,
      system: [{ type: "text", text: ASSISTANT_PROMPT, cache_control: { type: "ephemeral" } }],
      messages: [{ role: "user", content: [{ type: "text", text: input, cache_control: { type: "ephemeral" } }] }],
    });
  });

  it("serves the response artifact as the model's message", async () => {
    const { task } = await run("assistant", ONE_TURN);
    const response = JSON.parse(await artifact(task.id, turnFiles(1)[1] as string));
    expect(response).toMatchObject({
      type: "message",
      role: "assistant",
      content: [{ type: "text", text: "The bundled answer." }],
      stop_reason: "end_turn",
    });
  });

  it("serves llm_transcript.log with one successful attempt", async () => {
    const { task } = await run("assistant", ONE_TURN);
    const transcript = await artifact(task.id, "llm_transcript.log");
    expect(transcript.match(/^=== .*$/gm)).toStrictEqual([
      expect.stringMatching(/^=== decision_loop turn 1 attempt 1 · anthropic\/claude-sonnet-5-5 · success · \d+ ms$/),
    ]);
    expect(transcript).toContain("--- response ---\nThe bundled answer.\n");
  });

  it("carries an x-request-id header on file content", async () => {
    const { task } = await run("assistant", ONE_TURN);
    const res = await api(`/v1/tasks/${task.id}/artifacts/final_summary.md`);
    expect(res.headers.get("x-request-id")).toMatch(UUID_V4);
  });

  it("answers a path the bundle does not hold with 404 artifact_not_found naming path", async () => {
    const { task } = await run("assistant", ONE_TURN);
    await expectError(await api(`/v1/tasks/${task.id}/artifacts/nope.txt`), 404, "artifact_not_found", "path");
  });

  it("rejects a path with a '..' segment with 400 validation_failed naming path", async () => {
    const { task } = await run("assistant", ONE_TURN);
    // Encoded so the URL parser keeps the segment instead of resolving it before the request is sent.
    const res = await api(`/v1/tasks/${task.id}/artifacts/artifacts%2F..%2Fevents.jsonl`);
    await expectError(res, 400, "validation_failed", "path");
  });
});

describe("the bundle of a run that did not complete", () => {
  it("holds the events, the summary with the error, and the failed response of a run rejected with 400", async () => {
    const { task } = await run("assistant", [
      { content: [{ type: "text", text: "unused" }], faults: [{ kind: "http", status: 400 }] },
    ]);
    expect(task.status).toBe("failed");
    expect((await listing(task.id)).artifacts.map((a) => a.path)).toStrictEqual([...turnFiles(1), ...endOfRunFiles()]);
    const summary = await artifact(task.id, "final_summary.md");
    expect(summary).toContain("- Status: failed");
    expect(summary).toContain("## Error\n\nprovider_rejected_request: ");
    const events = (await artifact(task.id, "events.jsonl")).trimEnd().split("\n");
    expect(JSON.parse(events.at(-1) ?? "{}").event_type).toBe("run_failed");
    expect(await artifact(task.id, turnFiles(1)[1] as string)).toMatch(/^REQUEST FAILED: provider_rejected_request: /);
  });

  it("holds the events and the summary of a canceled run as soon as the cancel returns", async () => {
    const marker = uniqueMarker("bundle-canceled");
    await script(marker, [{ content: [{ type: "text", text: "never sent" }] }], { ttft_ms: 20_000 });
    const task = await startTask("assistant", `Cancel me ${marker}`);
    await readSse(await api(`/v1/tasks/${task.id}/events`), (f) => f.event === "llm_request_sent");
    expect((await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" })).status).toBe(200);
    const paths = (await listing(task.id)).artifacts.map((a) => a.path);
    expect(paths).toEqual(expect.arrayContaining(["events.jsonl", "final_summary.md"]));
    expect(await artifact(task.id, "final_summary.md")).toContain("- Status: canceled");
    const events = (await artifact(task.id, "events.jsonl")).trimEnd().split("\n");
    expect(JSON.parse(events.at(-1) ?? "{}").event_type).toBe("run_canceled");
  });
});

describe("the bundle's one archive (format 2)", () => {
  /** Every file the listing names, as the API serves it. */
  async function served(id: string): Promise<Map<string, Uint8Array>> {
    const out = new Map<string, Uint8Array>();
    for (const entry of (await listing(id)).artifacts) {
      const res = await api(`/v1/tasks/${id}/artifacts/${entry.path}`);
      expect(res.status).toBe(200);
      out.set(entry.path, new Uint8Array(await res.arrayBuffer()));
    }
    return out;
  }

  it("is the bundle's only object in the store, opens with bundle.json, and holds each file the API serves", async () => {
    const { task } = await run("assistant", ONE_TURN);
    const files = await served(task.id);
    const objects = await runsBucket().list({ prefix: `runs/${task.id}/` });
    expect(objects.objects.map((o) => o.key)).toStrictEqual([`runs/${task.id}/bundle.tar`]);
    const archive = new Uint8Array(
      await ((await runsBucket().get(`runs/${task.id}/bundle.tar`))?.arrayBuffer() ?? new ArrayBuffer(0)),
    );
    const entries = readTar(archive);
    expect(entries[0]?.path).toBe("bundle.json");
    expect(entries.map((e) => e.path).sort()).toStrictEqual([...files.keys()].sort());
    for (const entry of entries) {
      expect(archive.subarray(entry.offset, entry.offset + entry.size)).toStrictEqual(files.get(entry.path));
    }
    const manifest = JSON.parse(new TextDecoder().decode(files.get("bundle.json"))) as BundleManifest;
    expect([manifest.format, manifest.version, manifest.task_id]).toStrictEqual([
      "outpost.run-bundle",
      BUNDLE_FORMAT_VERSION,
      task.id,
    ]);
    const listed = (await listing(task.id)).artifacts.filter((a) => a.path !== "bundle.json");
    expect(manifest.files).toStrictEqual(
      listed.map((a) => ({
        path: a.path,
        size: a.size,
        content_type: a.content_type,
        created_at: a.created_at,
        in_archive: true,
      })),
    );
  });

  it("downloads as one tar file with every listed file, the archive's name in its disposition", async () => {
    const { task } = await run("assistant", ONE_TURN);
    const files = await served(task.id);
    const res = await api(`/v1/tasks/${task.id}/bundle`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/x-tar");
    expect(res.headers.get("content-disposition")).toBe(`attachment; filename="${task.id}.tar"`);
    const tar = new Uint8Array(await res.arrayBuffer());
    expect(Number(res.headers.get("content-length"))).toBe(tar.byteLength);
    const entries = readTar(tar);
    expect(new Map(entries.map((e) => [e.path, tar.slice(e.offset, e.offset + e.size)]))).toStrictEqual(files);
  });

  it("adds a file too large to stage, an object of its own, to the download after the archive's files", async () => {
    const agent = defineAgent({ bash: { enabled: true } });
    const marker = uniqueMarker("bundle-large");
    await script(marker, [
      {
        content: [toolUse("Bash", { command: `seq 1 9000 | sed "s/$/ ${".".repeat(64)}/"` })],
        stop_reason: "tool_use",
      },
      { content: [{ type: "text", text: "Counted." }] },
    ]);
    const task = await waitForTask((await startTask(agent, `count ${marker}`)).id);
    expect(task.status).toBe("completed");
    const large = (await listing(task.id)).artifacts.find((a) => a.path.endsWith("_stdout.txt"));
    // 9,000 lines of a number (34,893 digits in all), a space, 64 dots and a newline: over the 512 KiB staging limit.
    expect(large?.size).toBe(34_893 + 9000 * 66);
    const keys = (await runsBucket().list({ prefix: `runs/${task.id}/` })).objects.map((o) => o.key);
    expect(keys.sort()).toStrictEqual([`runs/${task.id}/${large?.path}`, `runs/${task.id}/bundle.tar`].sort());
    const manifest = JSON.parse(await artifact(task.id, "bundle.json")) as BundleManifest;
    expect(manifest.files.find((f) => f.path === large?.path)?.in_archive).toBe(false);
    const tar = new Uint8Array(await (await api(`/v1/tasks/${task.id}/bundle`)).arrayBuffer());
    const entries = readTar(tar);
    expect(entries.at(-1)?.path).toBe(large?.path);
    const last = entries.at(-1);
    const text = new TextDecoder().decode(tar.subarray(last?.offset ?? 0, (last?.offset ?? 0) + (last?.size ?? 0)));
    expect(text).toBe(await artifact(task.id, large?.path ?? ""));
    expect(entries.map((e) => e.path).sort()).toStrictEqual(
      (await listing(task.id)).artifacts.map((a) => a.path).sort(),
    );
  });

  it("answers 409 run_not_ended while the task runs, and 404 task_not_found for a task that does not exist", async () => {
    const marker = uniqueMarker("bundle-running");
    await script(marker, [{ content: [{ type: "text", text: "slow" }] }], { ttft_ms: 20_000 });
    const task = await startTask("assistant", `Wait ${marker}`);
    await expectError(await api(`/v1/tasks/${task.id}/bundle`), 409, "run_not_ended");
    expect((await api(`/v1/tasks/${task.id}/cancel`, { method: "POST" })).status).toBe(200);
    expect((await api(`/v1/tasks/${task.id}/bundle`)).status).toBe(200);
    await expectError(await api(`/v1/tasks/${crypto.randomUUID()}/bundle`), 404, "task_not_found", "id");
  });
});
