// Issue 36, item 2, "start a task" on every door a client calls: /v1's task creation and invocation, A2A's
// SendMessage over both bindings, the MCP server's agent tool (held open, and task-augmented), and a signed hook's
// delivery. Each row sends the same command through one door and shows one check holding there, in that door's own
// error shape: a key without `run` is refused, an input or a body over the cap is refused, and a key limited to N
// tasks a minute has its N+1th creation refused; and in every case the task the refused request would have made
// (its id follows from the Idempotency-Key) does not exist. Schedules, evaluations and sub-agents, the doors no client
// holds open, are stored-work.test.ts and sub-agents.test.ts.
import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { HookReceiptSchema } from "../../src/http/responses.ts";
import { derivedTaskId } from "../../src/tasks/task-ids.ts";
import { api, defineAgent, parseBody, script, uniqueMarker, waitForTask } from "../support/helpers.ts";
import {
  type Call,
  idempotent,
  KEYS,
  LIMITED,
  mcpPost,
  START_DOORS,
  type StartDoor,
  setBucket,
  startThrough,
  taskExists,
} from "./doors.ts";
import { httpOutcome, type Outcome, type Row, refusal, rowName } from "./outcome.ts";

const agent = defineAgent({ description: "Answers.", allowedTools: [] });

/** One character past a task's input (MAX_INPUT_CHARS). */
const OVER_INPUT_CAP = "y".repeat(100_001);
/** Past a request body's 256 KiB (MAX_BODY_BYTES), and past the MCP server's room for its envelope around one. */
const OVER_BODY_CAP = "z".repeat(300 * 1024);

// The refusals' messages are matched on what they must say, not word for word: the words are the door's to choose.
const SCOPE_MESSAGE = expect.stringMatching(/scopes \(read\) do not include run/);
const BODY_MESSAGE = expect.stringMatching(/larger than 262144 bytes/);
const RATE_MESSAGE = expect.stringMatching(/may create 3 tasks a minute; try again in ([1-9]|1\d|20) s/);
const inputMessage = (field: string) =>
  expect.stringMatching(new RegExp(`^Invalid ${field}: must be at most 100000 characters`));
/** Seconds until the key's next token: at most the 20 s one of 3 a minute takes. */
const RETRY_AFTER = /^([1-9]|1\d|20)$/;

/** How a door answers each refusal. */
interface Refusals {
  scope: Outcome;
  input: Outcome;
  body: Outcome;
  rate: Outcome;
}

const v1Refusals = (inputField: string): Refusals => ({
  scope: refusal({
    status: 403,
    code: "insufficient_scope",
    form: "outpost",
    field: "authorization",
    message: SCOPE_MESSAGE,
  }),
  input: refusal({
    status: 400,
    code: "validation_failed",
    form: "outpost",
    field: inputField,
    message: inputMessage(inputField),
  }),
  body: refusal({ status: 413, code: "payload_too_large", form: "outpost", message: BODY_MESSAGE }),
  rate: refusal({
    status: 429,
    code: "rate_limited",
    form: "outpost",
    message: RATE_MESSAGE,
    retryAfter: expect.stringMatching(RETRY_AFTER),
  }),
});

/** The transport's own refusal of a body too large, before any JSON-RPC is read: HTTP 413, a JSON-RPC error, no id. */
const MCP_BODY = refusal({
  status: 413,
  code: null,
  form: "json-rpc -32000",
  message: expect.stringMatching(/Payload Too Large/),
});

/** Each door, how it answers each refusal, and how a body over the cap is sent to it. */
const DOORS: { door: StartDoor; refuses: Refusals; overBody?: (call: Call) => Promise<Outcome> }[] = [
  { door: START_DOORS.v1Tasks, refuses: v1Refusals("input") },
  { door: START_DOORS.v1Invoke, refuses: v1Refusals("message") },
  {
    door: START_DOORS.a2aJsonRpc,
    refuses: {
      // A scope refusal is Outpost's own 403 on every A2A route, before A2A (docs/a2a.md).
      scope: v1Refusals("input").scope,
      input: refusal({
        status: 200,
        code: "validation_failed",
        form: "json-rpc -32602",
        field: "message.parts",
        message: inputMessage("message.parts"),
      }),
      body: refusal({ status: 413, code: "payload_too_large", form: "json-rpc -32600", message: BODY_MESSAGE }),
      // JSON-RPC answers a refusal that is not about the request's content as an internal error carrying the code.
      rate: refusal({
        status: 200,
        code: "rate_limited",
        form: "json-rpc -32603",
        message: RATE_MESSAGE,
        retryAfter: expect.stringMatching(RETRY_AFTER),
      }),
    },
  },
  {
    door: START_DOORS.a2aRest,
    refuses: {
      scope: v1Refusals("input").scope,
      input: refusal({
        status: 400,
        code: "validation_failed",
        form: "a2a-rest INVALID_ARGUMENT",
        field: "message.parts",
        message: inputMessage("message.parts"),
      }),
      body: refusal({
        status: 413,
        code: "payload_too_large",
        form: "a2a-rest INVALID_ARGUMENT",
        message: BODY_MESSAGE,
      }),
      // /v1's 429, and with it /v1's Retry-After (docs/reference/errors.md: "Retry-After says when to try again").
      rate: refusal({
        status: 429,
        code: "rate_limited",
        form: "a2a-rest UNKNOWN",
        message: RATE_MESSAGE,
        retryAfter: expect.stringMatching(RETRY_AFTER),
      }),
    },
  },
  {
    door: START_DOORS.mcp,
    // The SDK's client does not let the transport's 413 through as it came: sent as raw JSON-RPC.
    overBody: (call) => mcpPost({ name: agent, arguments: { input: OVER_BODY_CAP } }, call),
    refuses: {
      scope: refusal({
        status: 200,
        code: "insufficient_scope",
        form: "mcp -32600",
        field: "authorization",
        message: SCOPE_MESSAGE,
      }),
      input: refusal({
        status: 200,
        code: "validation_failed",
        form: "mcp isError",
        field: "input",
        message: inputMessage("input"),
      }),
      body: MCP_BODY,
      rate: refusal({ status: 200, code: "rate_limited", form: "mcp isError", message: RATE_MESSAGE }),
    },
  },
  {
    door: START_DOORS.mcpTask,
    overBody: (call) => mcpPost({ name: agent, arguments: { input: OVER_BODY_CAP }, task: {} }, call),
    refuses: {
      scope: refusal({
        status: 200,
        code: "insufficient_scope",
        form: "mcp -32600",
        field: "authorization",
        message: SCOPE_MESSAGE,
      }),
      input: refusal({
        status: 200,
        code: "validation_failed",
        form: "mcp -32602",
        field: "input",
        message: inputMessage("input"),
      }),
      body: MCP_BODY,
      rate: refusal({ status: 200, code: "rate_limited", form: "mcp -32602", message: RATE_MESSAGE }),
    },
  },
];

/** A fresh input the emulator answers "ok" to. */
async function answered(label: string): Promise<string> {
  const marker = uniqueMarker(label);
  await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
  return `Say ok ${marker}`;
}

const COMMAND = "start a task";

function doorRows({ door, refuses, overBody }: (typeof DOORS)[number]): Row[] {
  const row = (check: Row["check"], behaviour: string, run: () => Promise<void>): Row => ({
    command: COMMAND,
    adapter: door.adapter,
    check,
    behaviour,
    run,
  });
  return [
    row("scope", "a read-only key is refused and starts nothing; a key that may run starts the task", async () => {
      const input = await answered("start-scope");
      const refused = await startThrough(door, agent, input, KEYS.reader);
      expect(refused.outcome).toEqual(refuses.scope);
      expect(await taskExists(refused.id)).toBe(false);
      const allowed = await startThrough(door, agent, input, KEYS.admin);
      expect(allowed.outcome.ok).toBe(true);
      expect((await waitForTask(allowed.id)).status).toBe("completed");
    }),
    row("size cap", "an input over 100,000 characters is refused and starts nothing", async () => {
      const refused = await startThrough(door, agent, OVER_INPUT_CAP, KEYS.admin);
      expect(refused.outcome).toEqual(refuses.input);
      expect(await taskExists(refused.id)).toBe(false);
    }),
    row("size cap", "a body over 256 KiB is refused and starts nothing", async () => {
      const { idempotencyKey, id } = await idempotent("start-body");
      const call = { key: KEYS.admin, idempotencyKey };
      const outcome = await (overBody ? overBody(call) : door.start(agent, OVER_BODY_CAP, call));
      expect(outcome).toEqual(refuses.body);
      expect(await taskExists(id)).toBe(false);
    }),
    row("rate", "a key limited to 3 tasks a minute starts 3, and its 4th is refused and starts nothing", async () => {
      const input = await answered("start-rate");
      await setBucket(LIMITED.id, LIMITED.perMinute);
      const started: string[] = [];
      for (let i = 0; i < LIMITED.perMinute; i++) {
        const { outcome, id } = await startThrough(door, agent, input, LIMITED.key, LIMITED.tenant);
        expect(outcome.ok).toBe(true);
        started.push(id);
      }
      const refused = await startThrough(door, agent, input, LIMITED.key, LIMITED.tenant);
      expect(refused.outcome).toEqual(refuses.rate);
      expect(await taskExists(refused.id, LIMITED.key)).toBe(false);
      for (const id of started) expect((await waitForTask(id, 20, LIMITED.key)).status).toBe("completed");
    }),
  ];
}

describe("start a task, on every door a client calls", () => {
  for (const row of DOORS.flatMap(doorRows)) it(rowName(row), row.run, 60_000);
});

// ---- A signed hook's delivery: the signature is its credential (no scope), its hook its rate -----------------------

const HOOK_SECRET = (env as unknown as Record<string, string>).TEST_STANDARD_HOOK_SECRET as string;
let hooks = 0;

/** An agent with one Standard Webhooks hook whose input is the payload's `text`; returns the hook id. */
function hookWith(settings: Record<string, unknown> = {}): string {
  const id = `commands-hook-${++hooks}-${crypto.randomUUID().slice(0, 8)}`;
  const hook = { scheme: "standard", secret: "TEST_STANDARD_HOOK_SECRET", input: "{{payload.text}}", ...settings };
  // As the agent file's `hooks` reads it (test/inbound-hooks/hooks.test.ts casts it the same way): checked when built.
  defineAgent({ allowedTools: [], hooks: { [id]: hook } as never });
  return id;
}

/** Delivers `payload` to the hook, signed, under a fresh delivery id; the outcome and the task it would start. */
async function deliver(hookId: string, payload: unknown) {
  const body = JSON.stringify(payload);
  const deliveryId = `msg_${crypto.randomUUID()}`;
  const at = new Date();
  const headers = {
    "content-type": "application/json",
    "webhook-id": deliveryId,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(HOOK_SECRET).sign(deliveryId, at, body),
  };
  const res = await api(`/v1/hooks/${hookId}`, { method: "POST", body, headers, key: null });
  const id = await derivedTaskId("hook", "default", hookId, deliveryId);
  return { res, id };
}

const HOOK = "/v1 POST /v1/hooks/:hook_id (a signed delivery)";
const hookRows: Row[] = [
  {
    command: COMMAND,
    adapter: HOOK,
    check: "size cap",
    behaviour: "a delivery whose input renders past 100,000 characters is refused 422 and starts nothing",
    run: async () => {
      const { res, id } = await deliver(hookWith(), { text: OVER_INPUT_CAP });
      expect(await httpOutcome(res)).toEqual(
        refusal({
          status: 422,
          code: "hook_input_too_long",
          form: "outpost",
          message: expect.stringMatching(/rendered 100001 characters; a task's input is at most 100000/),
        }),
      );
      expect(await taskExists(id)).toBe(false);
    },
  },
  {
    command: COMMAND,
    adapter: HOOK,
    check: "rate",
    behaviour: "a hook limited to 1 run a minute starts 1, and its 2nd delivery is refused 429 and starts nothing",
    run: async () => {
      const hookId = hookWith({ rate_limit_per_minute: 1 });
      const first = await deliver(hookId, { text: await answered("hook-rate") });
      expect(first.res.status).toBe(202);
      expect((await parseBody(first.res, HookReceiptSchema)).task_id).toBe(first.id);
      const second = await deliver(hookId, { text: "one more" });
      expect(await httpOutcome(second.res)).toEqual(
        refusal({
          status: 429,
          code: "rate_limited",
          form: "outpost",
          message: expect.stringMatching(/may start 1 runs a minute; try again in ([1-9]|[1-5]\d|60) s/),
          retryAfter: expect.stringMatching(/^([1-9]|[1-5]\d|60)$/),
        }),
      );
      expect(await taskExists(second.id)).toBe(false);
      expect((await waitForTask(first.id)).status).toBe("completed");
    },
  },
];

describe("start a task, on a hook's door", () => {
  for (const row of hookRows) it(rowName(row), row.run);
});
