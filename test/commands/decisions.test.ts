// Issue 36, item 2, "decide what a run waits for" on every door that offers it: /v1's POST /v1/tasks/:id/resume and
// POST /v1/sessions/:id/resume, and A2A's reply to an input-required task over both bindings (a message naming the
// request in its metadata). The run asks two questions in a row (AskUser), so that it still waits after the first
// answer. Each row shows one check holding there, in the door's own error shape: a key without `run` is refused, an
// answer over the cap is refused, an answer naming a request that is not the one pending is refused with the pending
// request's id (pending_input_changed), and a repeated answer gets the original answer; and each time, what was
// decided is exactly what the row says (the run's human_decision events), and the run waits for what it should.
import { describe, expect, it } from "vitest";
import {
  ResumeResponseSchema,
  type SessionResource,
  SessionResourceSchema,
  SessionResponseSchema,
  SessionResumeResponseSchema,
  TaskResponseSchema,
  TurnResponseSchema,
} from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  parseEvent,
  pendingRequestId,
  readSse,
  script,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";
import { a2aMessage, a2aSend, type Binding, KEYS, v1Post } from "./doors.ts";
import { type Outcome, type Row, refusal, rowName } from "./outcome.ts";

const asker = defineAgent({ allowedTools: ["AskUser"] });

/** Scripts a run that asks "Which city?" then "Which day?", then answers "Booked."; returns its input. */
async function twoQuestions(label: string): Promise<string> {
  const marker = uniqueMarker(label);
  const ask = (question: string) => ({ content: [toolUse("AskUser", { question })], stop_reason: "tool_use" });
  await script(marker, [ask("Which city?"), ask("Which day?"), done]);
  return `Book a trip ${marker}`;
}

/** What waits: a task's or a session's id, and the request it waits for. */
interface Waiting {
  id: string;
  requestId: string;
}

interface DecideDoor {
  adapter: string;
  /** Starts a run through the door's own kind of thing, and waits until it asks its first question. */
  waiting: (input: string) => Promise<Waiting>;
  /** Answers `requestId` with `answer`; `messageId` names an A2A reply (a repeat is known by it). */
  decide: (id: string, requestId: string, answer: string, key: string, messageId?: string) => Promise<Outcome>;
  /** What the run waits for now, once it no longer runs. */
  pending: (id: string, previous?: string) => Promise<string>;
  /** The requests answered so far, in order. */
  decided: (id: string) => Promise<string[]>;
  /** Whether the door marks a repeat's answer as one (Idempotent-Replayed); A2A answers it with the task as it is. */
  marksRepeats: boolean;
  refuses: { scope: Outcome; size: Outcome; stale: (pending: string) => Outcome };
}

/** The requests a stream's human_decision events answered, read up to the newest event `lastSeq`. */
async function decisionsIn(path: string, lastSeq: number): Promise<string[]> {
  const frames = await readSse(await api(`${path}/events`), (f) => Number(f.id) >= lastSeq);
  return frames
    .map((f) => parseEvent(f.data))
    .filter((e) => e.event_type === "human_decision")
    .map((e) => String(e.payload.request_id));
}

const taskDecided = async (id: string) => decisionsIn(`/v1/tasks/${id}`, (await waitForTask(id, 0)).last_event_seq);

/** The task's pending request once it waits again (not `previous`). */
async function taskPending(id: string, previous?: string): Promise<string> {
  for (let i = 0; i < 100; i++) {
    const task = await waitForTask(id);
    if (task.status === "input_required" && task.pending_input?.request_id !== previous) return pendingRequestId(task);
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`task ${id} never waited for another request than ${previous}`);
}

const SCOPE_MESSAGE = expect.stringMatching(/scopes \(read\) do not include run/);
const CAP_MESSAGE = expect.stringMatching(/^Invalid message: /);
const v1Refusals: DecideDoor["refuses"] = {
  scope: refusal({
    status: 403,
    code: "insufficient_scope",
    form: "outpost",
    field: "authorization",
    message: SCOPE_MESSAGE,
  }),
  size: refusal({ status: 400, code: "validation_failed", form: "outpost", field: "message", message: CAP_MESSAGE }),
  stale: (pending) =>
    refusal({
      status: 409,
      code: "pending_input_changed",
      form: "outpost",
      field: "request_id",
      message: expect.stringContaining(pending),
    }),
};

const v1Task: DecideDoor = {
  adapter: "/v1 POST /v1/tasks/:id/resume",
  waiting: async (input) => {
    const res = await v1Post(`/v1/agents/${asker}/tasks`, { input }, TaskResponseSchema);
    const id = res.taskId ?? "";
    return { id, requestId: await taskPending(id) };
  },
  decide: (id, requestId, answer, key) =>
    v1Post(
      `/v1/tasks/${id}/resume`,
      { request_id: requestId, action: "approve", message: answer },
      ResumeResponseSchema,
      { key },
    ),
  pending: taskPending,
  decided: taskDecided,
  marksRepeats: true,
  refuses: v1Refusals,
};

function readSession(id: string): Promise<SessionResource> {
  return apiJson(`/v1/sessions/${id}`, SessionResourceSchema);
}

const v1Session: DecideDoor = {
  adapter: "/v1 POST /v1/sessions/:id/resume",
  waiting: async (input) => {
    const opened = await v1Post(`/v1/agents/${asker}/sessions`, {}, SessionResponseSchema);
    const id = opened.taskId ?? "";
    // Answered 202 once the turn waits for a person.
    expect((await v1Post(`/v1/sessions/${id}/messages?wait=20`, { message: input }, TurnResponseSchema)).status).toBe(
      202,
    );
    return { id, requestId: await v1Session.pending(id) };
  },
  decide: (id, requestId, answer, key) =>
    v1Post(
      `/v1/sessions/${id}/resume`,
      { request_id: requestId, action: "approve", message: answer },
      SessionResumeResponseSchema,
      { key },
    ),
  pending: async (id, previous) => {
    for (let i = 0; i < 200; i++) {
      const session = await readSession(id);
      const current = session.pending_input?.request_id;
      if (session.status === "input_required" && current && current !== previous) return current;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`session ${id} never waited for another request than ${previous}`);
  },
  decided: async (id) => decisionsIn(`/v1/sessions/${id}`, (await readSession(id)).last_event_seq),
  marksRepeats: true,
  refuses: v1Refusals,
};

function a2aDoor(binding: Binding): DecideDoor {
  const rpc = binding === "JSON-RPC";
  return {
    adapter: `A2A ${binding} SendMessage replying to the input-required task`,
    waiting: async (input) => {
      // A blocking SendMessage answers once the task settles: here, waiting for input.
      const started = await a2aSend(binding, asker, { message: a2aMessage([{ text: input }]) });
      const id = started.taskId ?? "";
      return { id, requestId: await taskPending(id) };
    },
    decide: (id, requestId, answer, key, messageId) =>
      a2aSend(
        binding,
        asker,
        {
          message: a2aMessage([{ text: answer }], {
            taskId: id,
            metadata: { request_id: requestId },
            ...(messageId ? { messageId } : {}),
          }),
        },
        { key },
      ),
    pending: taskPending,
    decided: taskDecided,
    marksRepeats: false,
    refuses: {
      // Outpost's own 403 on every A2A route, before A2A (docs/a2a.md).
      scope: v1Refusals.scope,
      size: refusal({
        status: rpc ? 200 : 400,
        code: "validation_failed",
        form: rpc ? "json-rpc -32602" : "a2a-rest INVALID_ARGUMENT",
        field: "message",
        message: CAP_MESSAGE,
      }),
      // Invalid params naming Outpost's code; /v1's 409 on HTTP+JSON.
      stale: (pending) =>
        refusal({
          status: rpc ? 200 : 409,
          code: "pending_input_changed",
          form: rpc ? "json-rpc -32602" : "a2a-rest INVALID_ARGUMENT",
          field: "request_id",
          message: expect.stringContaining(pending),
        }),
    },
  };
}

const COMMAND = "decide what a run waits for";

function decisionRows(door: DecideDoor): Row[] {
  const row = (check: Row["check"], behaviour: string, run: () => Promise<void>): Row => ({
    command: COMMAND,
    adapter: door.adapter,
    check,
    behaviour,
    run,
  });
  return [
    row("scope", "a read-only key is refused and decides nothing; a key that may run decides", async () => {
      const { id, requestId } = await door.waiting(await twoQuestions("decide-scope"));
      expect(await door.decide(id, requestId, "Lyon", KEYS.reader)).toEqual(door.refuses.scope);
      expect(await door.decided(id)).toEqual([]);
      expect(await door.pending(id)).toBe(requestId);
      expect((await door.decide(id, requestId, "Lyon", KEYS.admin)).ok).toBe(true);
      expect(await door.pending(id, requestId)).not.toBe(requestId);
      expect(await door.decided(id)).toEqual([requestId]);
    }),
    row("size cap", "an answer over 100,000 characters is refused and decides nothing", async () => {
      const { id, requestId } = await door.waiting(await twoQuestions("decide-size"));
      expect(await door.decide(id, requestId, "l".repeat(100_001), KEYS.admin)).toEqual(door.refuses.size);
      expect(await door.decided(id)).toEqual([]);
      expect(await door.pending(id)).toBe(requestId);
    }),
    row(
      "stale decision",
      "an answer naming a request that is not the one pending is refused with the pending request's id, and decides nothing",
      async () => {
        const { id, requestId } = await door.waiting(await twoQuestions("decide-stale"));
        expect(await door.decide(id, "toolu_not_pending", "Lyon", KEYS.admin)).toEqual(door.refuses.stale(requestId));
        expect(await door.decided(id)).toEqual([]);
        expect(await door.pending(id)).toBe(requestId);
      },
    ),
    row(
      "stale decision",
      "the same answer sent again, once the run waits for its next request, gets the original answer and decides nothing more",
      async () => {
        const { id, requestId } = await door.waiting(await twoQuestions("decide-repeat"));
        const messageId = crypto.randomUUID();
        const first = await door.decide(id, requestId, "Lyon", KEYS.admin, messageId);
        expect([first.ok, first.replayed]).toEqual([true, false]);
        const next = await door.pending(id, requestId);
        const again = await door.decide(id, requestId, "Lyon", KEYS.admin, messageId);
        expect(again).toEqual({ ...first, replayed: door.marksRepeats });
        expect(await door.decided(id)).toEqual([requestId]);
        expect(await door.pending(id)).toBe(next);
      },
    ),
  ];
}

describe("decide what a run waits for, on every door that offers it", () => {
  const doors = [v1Task, v1Session, a2aDoor("JSON-RPC"), a2aDoor("HTTP+JSON")];
  for (const row of doors.flatMap(decisionRows)) it(rowName(row), row.run, 60_000);
});
