// Issue 36, item 2, "cancel a task" and "attach a callback" on every door that offers them. Cancelling needs `run`:
// /v1's POST /v1/tasks/:id/cancel, A2A's CancelTask over both bindings and the MCP server's tasks/cancel refuse a
// read-only key and leave the task as it was, and cancel it for a key that may run. A callback carries the task's
// result and what it waits for, so asking for one needs `read`: /v1's `webhook` in the creation body, A2A's
// CreateTaskPushNotificationConfig and a SendMessage carrying configuration.taskPushNotificationConfig (both
// bindings) refuse a run-only key before anything starts or is stored; and a push config's body over the cap is
// refused and stores nothing.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { TaskResponseSchema } from "../../src/http/responses.ts";
import { receiver } from "../support/callback-helpers.ts";
import { api, defineAgent, done, script, startTask, toolUse, uniqueMarker, waitForTask } from "../support/helpers.ts";
import {
  a2aCancel,
  a2aCreatePushConfig,
  a2aMessage,
  a2aSend,
  type Binding,
  idempotent,
  KEYS,
  mcpCancel,
  taskExists,
  v1Post,
} from "./doors.ts";
import { type Outcome, type Row, refusal, rowName } from "./outcome.ts";

const asker = defineAgent({ allowedTools: ["AskUser"] });
const BINDINGS: Binding[] = ["JSON-RPC", "HTTP+JSON"];

/** A task of `asker` waiting for the answer to a question: it stays so until a row changes it. */
async function waitingTask(label: string): Promise<string> {
  const marker = uniqueMarker(label);
  await script(marker, [{ content: [toolUse("AskUser", { question: "Which city?" })], stop_reason: "tool_use" }, done]);
  const task = await startTask(asker, `Book ${marker}`);
  expect((await waitForTask(task.id)).status).toBe("input_required");
  return task.id;
}

const outpost403 = (needs: "run" | "read", field = "authorization") =>
  refusal({
    status: 403,
    code: "insufficient_scope",
    form: "outpost",
    field,
    message: expect.stringMatching(needs === "run" ? /scopes \(read\) do not include run/ : /read scope|include read/),
  });

// ---- Cancel -----------------------------------------------------------------------------------------------------

interface CancelDoor {
  adapter: string;
  cancel: (id: string, key: string) => Promise<Outcome>;
  refuses: Outcome;
}

const CANCEL_DOORS: CancelDoor[] = [
  {
    adapter: "/v1 POST /v1/tasks/:id/cancel",
    cancel: (id, key) => v1Post(`/v1/tasks/${id}/cancel`, {}, TaskResponseSchema, { key }),
    refuses: outpost403("run"),
  },
  ...BINDINGS.map(
    (binding): CancelDoor => ({
      adapter: `A2A ${binding} CancelTask`,
      cancel: (id, key) => a2aCancel(binding, asker, id, key),
      // Outpost's own 403 on every A2A route, before A2A (docs/a2a.md).
      refuses: outpost403("run"),
    }),
  ),
  {
    adapter: "MCP tasks/cancel",
    cancel: (id, key) => mcpCancel(id, key),
    refuses: refusal({
      status: 200,
      code: "insufficient_scope",
      form: "mcp -32600",
      field: "authorization",
      message: expect.stringMatching(/scopes \(read\) do not include run/),
    }),
  },
];

const cancelRows: Row[] = CANCEL_DOORS.map((door) => ({
  command: "cancel a task",
  adapter: door.adapter,
  check: "scope",
  behaviour: "a read-only key is refused and the task waits on; a key that may run cancels it",
  run: async () => {
    const id = await waitingTask("cancel-scope");
    expect(await door.cancel(id, KEYS.reader)).toEqual(door.refuses);
    expect((await waitForTask(id, 0)).status).toBe("input_required");
    expect((await door.cancel(id, KEYS.admin)).ok).toBe(true);
    expect((await waitForTask(id, 0)).status).toBe("canceled");
  },
}));

// ---- Attach a callback ------------------------------------------------------------------------------------------

/** A callback URL of the test's receiver (a host callbacks may reach in the test deployment). */
const callbackUrl = () => `${receiver}/r/commands-${crypto.randomUUID()}`;

/** ListTaskPushNotificationConfigsResponse as JSON: an empty list is left out, as proto3's JSON leaves it. */
const PushConfigListSchema = z.object({ configs: z.array(z.object({ id: z.string() })).default([]) });

/** The task's push configs as a key that may read sees them (A2A's ListTaskPushNotificationConfigs, HTTP+JSON). */
async function pushConfigs(taskId: string): Promise<unknown[]> {
  const res = await api(`/a2a/${asker}/tasks/${taskId}/pushNotificationConfigs`, {
    headers: { "a2a-version": "1.0" },
  });
  expect(res.status).toBe(200);
  return PushConfigListSchema.parse(await res.json()).configs;
}

const ATTACH = "attach a callback";

const webhookRow: Row = {
  command: ATTACH,
  adapter: "/v1 POST /v1/agents/:name/tasks with a webhook",
  check: "scope",
  behaviour: "a run-only key is refused naming webhook and starts nothing; a key that may read starts the task",
  run: async () => {
    const marker = uniqueMarker("webhook-scope");
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const body = { input: `Say ok ${marker}`, webhook: { url: callbackUrl() } };
    const refused = await idempotent("webhook-scope");
    const outcome = await v1Post(`/v1/agents/${asker}/tasks`, body, TaskResponseSchema, {
      key: KEYS.runner,
      ...refused,
    });
    expect(outcome).toEqual(outpost403("read", "webhook"));
    expect(await taskExists(refused.id)).toBe(false);
    const allowed = await v1Post(`/v1/agents/${asker}/tasks`, body, TaskResponseSchema, { key: KEYS.admin });
    expect([allowed.ok, allowed.status]).toEqual([true, 202]);
    expect((await waitForTask(allowed.taskId ?? "")).status).toBe("completed");
  },
};

function pushConfigRows(binding: Binding): Row[] {
  const adapter = `A2A ${binding} CreateTaskPushNotificationConfig`;
  const rpc = binding === "JSON-RPC";
  return [
    {
      command: ATTACH,
      adapter,
      check: "scope",
      behaviour: "a run-only key is refused and stores no config; a key that may read stores it",
      run: async () => {
        const id = await waitingTask("push-scope");
        const config = { url: callbackUrl(), token: "tok" };
        expect(await a2aCreatePushConfig(binding, asker, id, config, KEYS.runner)).toEqual(outpost403("read"));
        expect(await pushConfigs(id)).toEqual([]);
        expect((await a2aCreatePushConfig(binding, asker, id, config, KEYS.admin)).ok).toBe(true);
        expect(await pushConfigs(id)).toHaveLength(1);
        await v1Post(`/v1/tasks/${id}/cancel`, {}, TaskResponseSchema);
      },
    },
    {
      command: ATTACH,
      adapter,
      check: "size cap",
      behaviour: "a body over 256 KiB is refused 413 and stores no config",
      run: async () => {
        const id = await waitingTask("push-size");
        const config = { url: callbackUrl(), token: "t".repeat(300 * 1024) };
        expect(await a2aCreatePushConfig(binding, asker, id, config, KEYS.admin)).toEqual(
          refusal({
            status: 413,
            code: "payload_too_large",
            form: rpc ? "json-rpc -32600" : "a2a-rest INVALID_ARGUMENT",
            message: expect.stringMatching(/larger than 262144 bytes/),
          }),
        );
        expect(await pushConfigs(id)).toEqual([]);
        await v1Post(`/v1/tasks/${id}/cancel`, {}, TaskResponseSchema);
      },
    },
    {
      command: ATTACH,
      adapter: `A2A ${binding} SendMessage with configuration.taskPushNotificationConfig`,
      check: "scope",
      behaviour: "a run-only key is refused and starts nothing; a key that may read starts the task",
      run: async () => {
        const marker = uniqueMarker("push-message-scope");
        await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
        const params = () => ({
          message: a2aMessage([{ text: `Say ok ${marker}` }]),
          configuration: { returnImmediately: true, taskPushNotificationConfig: { url: callbackUrl(), token: "tok" } },
        });
        const refused = await idempotent("push-message-scope");
        expect(await a2aSend(binding, asker, params(), { key: KEYS.runner, ...refused })).toEqual(outpost403("read"));
        expect(await taskExists(refused.id)).toBe(false);
        const allowed = await a2aSend(binding, asker, params(), { key: KEYS.admin });
        expect(allowed.ok).toBe(true);
        expect((await waitForTask(allowed.taskId ?? "")).status).toBe("completed");
        expect(await pushConfigs(allowed.taskId ?? "")).toHaveLength(1);
      },
    },
    {
      command: ATTACH,
      adapter: `A2A ${binding} SendMessage with configuration.taskPushNotificationConfig`,
      check: "callback policy",
      behaviour:
        "a push URL the callback policy refuses (a private address) is refused before the task starts: nothing runs",
      run: async () => {
        const refused = await idempotent("push-message-policy");
        const params = {
          message: a2aMessage([{ text: "Never run: the push config is refused" }]),
          configuration: {
            returnImmediately: true,
            taskPushNotificationConfig: { url: "https://10.1.2.3/hook", token: "tok" },
          },
        };
        const answer = await a2aSend(binding, asker, params, { key: KEYS.admin, ...refused });
        expect([answer.ok, answer.code, answer.field]).toEqual([false, "invalid_callback_url", "url"]);
        expect(await taskExists(refused.id)).toBe(false);
      },
    },
  ];
}

describe("cancel a task, on every door that offers it", () => {
  for (const row of cancelRows) it(rowName(row), row.run);
});

describe("attach a callback, on every door that offers it", () => {
  for (const row of [webhookRow, ...BINDINGS.flatMap(pushConfigRows)]) it(rowName(row), row.run);
});
