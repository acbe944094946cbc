// What every JSON body is held to before its schema (src/http/validation.ts jsonBodyProblem), and seed files that do
// not fit the workspace: each is a 400 naming the field, never a 500 and never data silently lost.
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { type TaskResource, TaskResourceSchema } from "../../src/http/responses.ts";
import { MAX_JSON_DEPTH } from "../../src/http/validation.ts";
import { derivedTaskId, taskStubFor } from "../../src/tasks/task-ids.ts";
import { MAX_WORKSPACE_ENTRIES } from "../../src/workspace/limits.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  expectError,
  parseBody,
  script,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

/** JSON text of `levels` objects nested in each other, {"a":{"a":…1…}}, built without recursion. */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels)}1${"}".repeat(levels)}`;
}

/** The path of the level-`level` object of a nested() value put at `at` (level `at.length + 1`). */
function levelPath(at: string[], level: number): string {
  return [...at, ...Array<string>(level - at.length - 1).fill("a")].join(".");
}

/** POSTs a task (raw JSON text) under an Idempotency-Key, so the test can tell whether a task was created. */
async function create(agent: string, json: string): Promise<{ res: Response; key: string }> {
  const key = `bodies-${crypto.randomUUID()}`;
  const res = await api(`/v1/agents/${agent}/tasks`, {
    method: "POST",
    headers: { "idempotency-key": key },
    body: json,
  });
  return { res, key };
}

async function expectNoTask(id: Promise<string>): Promise<void> {
  const res = await api(`/v1/tasks/${await id}`);
  expect(res.status).toBe(404);
  await res.body?.cancel();
}

/** A task waiting for approval of a TodoWrite call. */
async function waitingTask(label: string): Promise<TaskResource> {
  const agent = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });
  const marker = uniqueMarker(label);
  await script(marker, [
    { content: [toolUse("TodoWrite", { todos: [{ content: "Hold", status: "pending" }] })], stop_reason: "tool_use" },
    done,
  ]);
  const task = await parseBody(
    await api(`/v1/agents/${agent}/tasks`, { method: "POST", body: JSON.stringify({ input: `plan ${marker}` }) }),
    TaskResourceSchema,
  );
  const waiting = await waitForTask(task.id);
  expect(waiting.status).toBe("input_required");
  return waiting;
}

function requestIdOf(task: TaskResource): string {
  const pending = task.pending_input;
  if (!pending) throw new Error(`task ${task.id} waits for nothing`);
  return pending.request_id;
}

const secrets = env as unknown as Record<string, string>;

/** Delivers `body` to a Standard Webhooks hook, signed; returns the response and the task id it would start. */
async function deliver(hookId: string, body: string): Promise<{ res: Response; taskId: Promise<string> }> {
  const delivery = `msg_${crypto.randomUUID()}`;
  const at = new Date();
  const headers = {
    "content-type": "application/json",
    "webhook-id": delivery,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secrets.TEST_STANDARD_HOOK_SECRET as string).sign(delivery, at, body),
  };
  const res = await api(`/v1/hooks/${hookId}`, { method: "POST", body, headers, key: null });
  return { res, taskId: derivedTaskId("hook", "default", hookId, delivery) };
}

describe("nesting depth", () => {
  it("refuses a resume whose tool_input nests thousands of levels with 400 naming the first value past level 32, and the task keeps waiting", async () => {
    const task = await waitingTask("deep-resume");
    const json = `{"request_id":${JSON.stringify(requestIdOf(task))},"action":"modify","tool_input":${nested(5_000)}}`;
    const res = await api(`/v1/tasks/${task.id}/resume`, { method: "POST", body: json });
    const body = await expectError(res, 400, "validation_failed", levelPath(["tool_input"], MAX_JSON_DEPTH + 1));
    expect(body.error.message).toBe(
      `Invalid ${levelPath(["tool_input"], MAX_JSON_DEPTH + 1)}: nested deeper than 32 levels of arrays and objects.`,
    );
    const after = await apiJson(`/v1/tasks/${task.id}`, TaskResourceSchema);
    expect(after.status).toBe("input_required");
    expect(after.last_event_seq).toBe(task.last_event_seq);
  });

  it("passes a hook payload nested 32 levels deep and refuses one nested 33, naming the 33rd", async () => {
    const hookId = `deep-${crypto.randomUUID().slice(0, 8)}`;
    defineAgent({
      hooks: { [hookId]: { scheme: "standard", secret: "TEST_STANDARD_HOOK_SECRET", input: "{{payload.m}}" } },
    });
    const marker = uniqueMarker("deep-hook");
    await script(marker, [{ content: [{ type: "text", text: "Read." }] }]);
    // The payload is level 1 and n level 2: 31 more levels inside n reach level 32.
    const fits = await deliver(hookId, `{"m":${JSON.stringify(marker)},"n":${nested(31)}}`);
    expect(fits.res.status).toBe(202);
    expect((await waitForTask(await fits.taskId)).status).toBe("completed");
    const deeper = await deliver(hookId, `{"m":${JSON.stringify(marker)},"n":${nested(32)}}`);
    await expectError(deeper.res, 400, "validation_failed", levelPath(["n"], 33));
    await expectNoTask(deeper.taskId);
  });
});

describe("lone surrogates", () => {
  it("refuses seed files whose names hold lone surrogates (they would collapse into one name), naming the first, yet keeps a whole pair", async () => {
    const { res, key } = await create("coder", '{"input":"Never run","files":{"a\\ud800.txt":"1","a\\udc00.txt":"2"}}');
    const body = await expectError(res, 400, "validation_failed", "files.a\ud800.txt");
    expect(body.error.message).toBe(
      "Invalid files.a\ud800.txt: the key contains a lone UTF-16 surrogate (half a character).",
    );
    await expectNoTask(derivedTaskId("idempotency", "default", key));
    // A character written as a pair of escapes is whole: the file is served under its name.
    const whole = await create("coder", '{"input":"Never run","dry_run":true,"files":{"\\ud83d\\ude00.txt":"smile"}}');
    expect(whole.res.status).toBe(202);
    const task = await parseBody(whole.res, TaskResourceSchema);
    const file = await api(`/v1/tasks/${task.id}/workspace/${encodeURIComponent("\u{1f600}.txt")}`);
    expect(file.status).toBe(200);
    expect(await file.text()).toBe("smile");
  });

  it("refuses a lone surrogate in any string value, naming its field, and creates no task", async () => {
    for (const [json, field] of [
      ['{"input":"half \\udbff a pair"}', "input"],
      ['{"input":"x","metadata":{"note":"\\udc00"}}', "metadata.note"],
      ['{"input":"x","tags":["ok","\\ud83d"]}', "tags.1"],
    ] as const) {
      const { res, key } = await create("coder", json);
      await expectError(res, 400, "validation_failed", field);
      await expectNoTask(derivedTaskId("idempotency", "default", key));
    }
  });

  it("refuses a hook delivery whose payload holds a lone surrogate, naming it, and starts nothing", async () => {
    const hookId = `surrogate-${crypto.randomUUID().slice(0, 8)}`;
    defineAgent({
      hooks: { [hookId]: { scheme: "standard", secret: "TEST_STANDARD_HOOK_SECRET", input: "{{payload.t}}" } },
    });
    const { res, taskId } = await deliver(hookId, '{"t":"Refund \\ud800"}');
    await expectError(res, 400, "validation_failed", "t");
    await expectNoTask(taskId);
  });
});

describe("__proto__ keys", () => {
  it("are refused in task metadata with 400 naming metadata.__proto__, not dropped with a 202", async () => {
    const { res, key } = await create("coder", '{"input":"Never run","metadata":{"team":"a","__proto__":"x"}}');
    const body = await expectError(res, 400, "validation_failed", "metadata.__proto__");
    expect(body.error.message).toBe('Invalid metadata.__proto__: "__proto__" is not accepted as a key.');
    await expectNoTask(derivedTaskId("idempotency", "default", key));
  });

  it("are refused at the top of a body and in a resume's tool_input alike, and the task keeps waiting", async () => {
    const { res } = await create("coder", '{"__proto__":{"input":"x"},"input":"Never run"}');
    await expectError(res, 400, "validation_failed", "__proto__");
    const task = await waitingTask("proto-resume");
    const json = `{"request_id":${JSON.stringify(requestIdOf(task))},"action":"modify","tool_input":{"todos":[],"__proto__":{"todos":[]}}}`;
    await expectError(
      await api(`/v1/tasks/${task.id}/resume`, { method: "POST", body: json }),
      400,
      "validation_failed",
      "tool_input.__proto__",
    );
    const after = await apiJson(`/v1/tasks/${task.id}`, TaskResourceSchema);
    expect(after.status).toBe("input_required");
    expect(after.last_event_seq).toBe(task.last_event_seq);
  });
});

describe("seed files past the workspace's entries", () => {
  /** 455 files, each 21 folders deep in its own folder: 22 entries each, so the 455th reaches 10,010. */
  const files: Record<string, string> = {};
  for (let i = 0; i < 455; i++) files[`f${i}/${Array.from({ length: 20 }, (_, j) => `d${j}`).join("/")}/x.txt`] = "x";
  const names = Object.keys(files);

  it("are refused with 400 workspace_full naming the first file past the limit, and no task is created", async () => {
    const { res, key } = await create("coder", JSON.stringify({ input: "Never run", files }));
    const body = await expectError(res, 400, "workspace_full", `files.${names[454]}`);
    expect(body.error.message).toBe(
      `A workspace holds at most ${MAX_WORKSPACE_ENTRIES} files and folders, and these files with the folders they imply hold more; ${names[454]} is the first past the limit.`,
    );
    await expectNoTask(derivedTaskId("idempotency", "default", key));
  });

  it("are answered by the task's object with a workspace_full value, not an exception, and it keeps no task", async () => {
    const id = crypto.randomUUID();
    const stub = taskStubFor(env, "default", id);
    const outcome = await stub.start({
      id,
      tenant: "default",
      agent: "coder",
      input: "Never run",
      metadata: {},
      model: "claude-sonnet-5-5",
      retentionDays: 30,
      retentionExplicit: false,
      tags: [],
      parentTaskId: null,
      files: Object.fromEntries(names.map((name) => [`/${name}`, "x"])),
    });
    expect(outcome).toStrictEqual({
      outcome: "workspace_full",
      message: `the workspace would exceed its limit of ${MAX_WORKSPACE_ENTRIES} files and folders`,
    });
    expect(await stub.get()).toBeNull();
  });
});
