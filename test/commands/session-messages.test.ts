// Issue 36, item 2, "send a session message" on every door that offers it: /v1's POST /v1/sessions/:id/messages, and
// the MCP server's send-message and start-session tools (start-session opens the session and sends its first
// message); and "open a session" on /v1. A message starts a run as a task's creation does, so each check of a
// creation holds: a key without `run` is refused, a message over the cap is refused, a key limited to N tasks a minute
// has its N+1th refused; and a refused message leaves no turn in the session (a refused opening, no session).
import { describe, expect, it } from "vitest";
import {
  type SessionResource,
  SessionResourceSchema,
  SessionResponseSchema,
  TurnResponseSchema,
} from "../../src/http/responses.ts";
import { api, apiJson, defineAgent, parseBody, script, uniqueMarker } from "../support/helpers.ts";
import { type Call, idempotent, KEYS, LIMITED, mcpCall, setBucket, v1Post } from "./doors.ts";
import { httpOutcome, type Outcome, type Row, refusal, rowName } from "./outcome.ts";

const agent = defineAgent({ description: "Chats.", allowedTools: [] });

const OVER_CAP = "m".repeat(100_001);
const SCOPE_MESSAGE = expect.stringMatching(/scopes \(read\) do not include run/);
const RATE_MESSAGE = expect.stringMatching(/may create 3 tasks a minute; try again in ([1-9]|1\d|20) s/);
const CAP_MESSAGE = expect.stringMatching(/^Invalid message: must be at most 100000 characters/);

/** A first message the emulator answers, turn after turn, "Hi." then "Still here." and "Yes.". */
async function chatInput(label: string): Promise<string> {
  const marker = uniqueMarker(label);
  const say = (text: string) => ({ content: [{ type: "text" as const, text }] });
  await script(marker, [say("Hi."), say("Still here."), say("Yes.")]);
  return `Hello ${marker}`;
}

/** A session of the agent opened with `key` on /v1, under `idempotencyKey` if given. */
async function openSession(key: string, idempotencyKey?: string): Promise<Outcome> {
  return v1Post(`/v1/agents/${agent}/sessions`, {}, SessionResponseSchema, {
    key,
    ...(idempotencyKey ? { idempotencyKey } : {}),
  });
}

async function newSession(key: string): Promise<string> {
  const opened = await openSession(key);
  expect(opened.ok).toBe(true);
  return opened.taskId ?? "";
}

function readSession(id: string, key: string): Promise<SessionResource> {
  return apiJson(`/v1/sessions/${id}`, SessionResourceSchema, { key });
}

/** Whether session `id` exists: 404 session_not_found is "no". */
async function sessionExists(id: string, key: string): Promise<boolean> {
  const res = await api(`/v1/sessions/${id}`, { key });
  if (res.status === 200) return true;
  const outcome = await httpOutcome(res);
  expect([outcome.status, outcome.code]).toEqual([404, "session_not_found"]);
  return false;
}

/** A door that sends `message` to session `id`, the turn followed to its end when the door allows it. */
interface MessageDoor {
  adapter: string;
  send: (id: string, message: string, key: string) => Promise<Outcome>;
  refuses: { scope: Outcome; size: Outcome; rate: Outcome };
}

const DOORS: MessageDoor[] = [
  {
    adapter: "/v1 POST /v1/sessions/:id/messages",
    send: (id, message, key) => v1Post(`/v1/sessions/${id}/messages?wait=20`, { message }, TurnResponseSchema, { key }),
    refuses: {
      scope: refusal({
        status: 403,
        code: "insufficient_scope",
        form: "outpost",
        field: "authorization",
        message: SCOPE_MESSAGE,
      }),
      size: refusal({
        status: 400,
        code: "validation_failed",
        form: "outpost",
        field: "message",
        message: CAP_MESSAGE,
      }),
      rate: refusal({
        status: 429,
        code: "rate_limited",
        form: "outpost",
        message: RATE_MESSAGE,
        retryAfter: expect.stringMatching(/^([1-9]|1\d|20)$/),
      }),
    },
  },
  {
    adapter: "MCP tools/call send-message",
    send: (session_id, message, key) => mcpCall("send-message", { session_id, message }, { key }),
    refuses: {
      scope: refusal({
        status: 200,
        code: "insufficient_scope",
        form: "mcp -32600",
        field: "authorization",
        message: SCOPE_MESSAGE,
      }),
      size: refusal({
        status: 200,
        code: "validation_failed",
        form: "mcp isError",
        field: "message",
        message: CAP_MESSAGE,
      }),
      rate: refusal({ status: 200, code: "rate_limited", form: "mcp isError", message: RATE_MESSAGE }),
    },
  },
];

const SEND = "send a session message";

function messageRows(door: MessageDoor): Row[] {
  const row = (check: Row["check"], behaviour: string, run: () => Promise<void>): Row => ({
    command: SEND,
    adapter: door.adapter,
    check,
    behaviour,
    run,
  });
  return [
    row("scope", "a read-only key is refused and adds no turn; a key that may run is answered", async () => {
      const input = await chatInput("session-scope");
      const id = await newSession(KEYS.admin);
      expect(await door.send(id, input, KEYS.reader)).toEqual(door.refuses.scope);
      expect((await readSession(id, KEYS.admin)).turns).toEqual([]);
      expect((await door.send(id, input, KEYS.admin)).ok).toBe(true);
      expect((await readSession(id, KEYS.admin)).turns.map((t) => t.status)).toEqual(["completed"]);
    }),
    row("size cap", "a message over 100,000 characters is refused and adds no turn", async () => {
      const id = await newSession(KEYS.admin);
      expect(await door.send(id, OVER_CAP, KEYS.admin)).toEqual(door.refuses.size);
      expect((await readSession(id, KEYS.admin)).turns).toEqual([]);
    }),
    row(
      "rate",
      "with its key limited to 3 tasks a minute, the opening and two messages take them; the third message is refused and adds no turn",
      async () => {
        const input = await chatInput("session-rate");
        await setBucket(LIMITED.id, LIMITED.perMinute);
        const id = await newSession(LIMITED.key);
        for (const message of [input, "Still there?"])
          expect((await door.send(id, message, LIMITED.key)).ok).toBe(true);
        expect(await door.send(id, "And now?", LIMITED.key)).toEqual(door.refuses.rate);
        expect((await readSession(id, LIMITED.key)).turns.map((t) => t.status)).toEqual(["completed", "completed"]);
      },
    ),
  ];
}

// ---- Doors that open a session: MCP's start-session (with its first message), /v1's POST …/sessions ---------------

/** start-session under a fresh Idempotency-Key: the outcome, and the id of the session it opens (or would have). */
async function startSession(
  message: string,
  key: string,
  tenant = "default",
): Promise<{ outcome: Outcome; id: string }> {
  const { idempotencyKey, id } = await idempotent("start-session", tenant);
  const call: Call = { key, idempotencyKey };
  return { outcome: await mcpCall("start-session", { agent, message }, call), id };
}

const START_SESSION = "MCP tools/call start-session";
const OPEN = "/v1 POST /v1/agents/:name/sessions";

const openingRows: Row[] = [
  {
    command: SEND,
    adapter: START_SESSION,
    check: "scope",
    behaviour: "a read-only key is refused and opens no session; a key that may run is answered",
    run: async () => {
      const input = await chatInput("start-session-scope");
      const refused = await startSession(input, KEYS.reader);
      expect(refused.outcome).toEqual(
        refusal({
          status: 200,
          code: "insufficient_scope",
          form: "mcp -32600",
          field: "authorization",
          message: SCOPE_MESSAGE,
        }),
      );
      expect(await sessionExists(refused.id, KEYS.admin)).toBe(false);
      const allowed = await startSession(input, KEYS.admin);
      expect(allowed.outcome.ok).toBe(true);
      expect((await readSession(allowed.id, KEYS.admin)).turns.map((t) => t.status)).toEqual(["completed"]);
    },
  },
  {
    command: SEND,
    adapter: START_SESSION,
    check: "size cap",
    behaviour: "a first message over 100,000 characters is refused and opens no session",
    run: async () => {
      const refused = await startSession(OVER_CAP, KEYS.admin);
      expect(refused.outcome).toEqual(
        refusal({
          status: 200,
          code: "validation_failed",
          form: "mcp isError",
          field: "message",
          message: CAP_MESSAGE,
        }),
      );
      expect(await sessionExists(refused.id, KEYS.admin)).toBe(false);
    },
  },
  {
    command: SEND,
    adapter: START_SESSION,
    check: "rate",
    behaviour:
      "with its key limited to 3 tasks a minute, a start-session takes one (its opening and first message are one command), a further message one, the last token opens a whole session with its turn; the next start-session is refused and opens no session",
    run: async () => {
      const input = await chatInput("start-session-rate");
      await setBucket(LIMITED.id, LIMITED.perMinute);
      const first = await startSession(input, LIMITED.key, LIMITED.tenant);
      expect(first.outcome.ok).toBe(true);
      const more = await mcpCall("send-message", { session_id: first.id, message: "More?" }, { key: LIMITED.key });
      expect(more.ok).toBe(true);
      const last = await startSession(input, LIMITED.key, LIMITED.tenant);
      expect(last.outcome.ok).toBe(true);
      expect((await readSession(last.id, LIMITED.key)).turns.map((t) => t.status)).toEqual(["completed"]);
      const refused = await startSession(input, LIMITED.key, LIMITED.tenant);
      expect(refused.outcome).toEqual(
        refusal({ status: 200, code: "rate_limited", form: "mcp isError", message: RATE_MESSAGE }),
      );
      expect(await sessionExists(refused.id, LIMITED.key)).toBe(false);
    },
  },
  {
    command: "open a session",
    adapter: OPEN,
    check: "scope",
    behaviour: "a read-only key is refused and opens no session",
    run: async () => {
      const { idempotencyKey, id } = await idempotent("open-scope");
      expect(await openSession(KEYS.reader, idempotencyKey)).toEqual(
        refusal({
          status: 403,
          code: "insufficient_scope",
          form: "outpost",
          field: "authorization",
          message: SCOPE_MESSAGE,
        }),
      );
      expect(await sessionExists(id, KEYS.admin)).toBe(false);
    },
  },
  {
    command: "open a session",
    adapter: OPEN,
    check: "rate",
    behaviour: "a key limited to 3 tasks a minute opens 3 sessions, and its 4th is refused and opens none",
    run: async () => {
      await setBucket(LIMITED.id, LIMITED.perMinute);
      for (let i = 0; i < LIMITED.perMinute; i++) {
        const opened = await api(`/v1/agents/${agent}/sessions`, { method: "POST", body: "{}", key: LIMITED.key });
        expect(opened.status).toBe(201);
        await parseBody(opened, SessionResourceSchema);
      }
      const { idempotencyKey, id } = await idempotent("open-rate", LIMITED.tenant);
      expect(await openSession(LIMITED.key, idempotencyKey)).toEqual(
        refusal({
          status: 429,
          code: "rate_limited",
          form: "outpost",
          message: RATE_MESSAGE,
          retryAfter: expect.stringMatching(/^([1-9]|1\d|20)$/),
        }),
      );
      expect(await sessionExists(id, LIMITED.key)).toBe(false);
    },
  },
];

describe("send a session message, and open a session, on every door that offers them", () => {
  for (const row of [...DOORS.flatMap(messageRows), ...openingRows]) it(rowName(row), row.run, 60_000);
});
