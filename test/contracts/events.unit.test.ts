// The event catalog (src/contracts/events.ts) and what is derived from it: the terminal set, redaction's content
// fields, and the check every test's event frames go through (test/support/checks.ts checkEvent), which must refuse what
// the catalog does not say.
import { describe, expect, it } from "vitest";
import { CUSTOM_EVENT_PREFIX, EVENT_CATALOG, EVENT_TYPES } from "../../src/contracts/events.ts";
import { TERMINAL_EVENT_TYPES } from "../../src/events/event-record.ts";
import { REDACTED, redactContent } from "../../src/events/redaction.ts";
import { checkEvent, errorOf } from "../support/checks.ts";

/** A record around `payload`, as a task's stream sends it. */
function record(eventType: string, payload: Record<string, unknown>, mode: "full" | "redacted" = "full") {
  return {
    seq: 3,
    run_id: "11111111-1111-4111-8111-111111111111",
    trace_id: "abcdefabcdefabcdefabcdefabcdefab",
    span_id: "abcdefabcdefabcd",
    timestamp: "2026-01-01T00:00:00.000Z",
    event_type: eventType,
    payload,
    redaction_mode: mode,
  };
}

const TODOS = { todos: [{ content: "Read the brief", status: "completed" }], completed: 1, total: 1 };

describe("the event catalog", () => {
  it("ends a task's stream after run_finished, run_failed and run_canceled, and a session's after session_closed", () => {
    expect([...TERMINAL_EVENT_TYPES].sort()).toEqual(["run_canceled", "run_failed", "run_finished", "session_closed"]);
  });

  it("leaves the custom_ prefix to agents' own events", () => {
    expect(EVENT_TYPES.filter((type) => type.startsWith(CUSTOM_EVENT_PREFIX))).toEqual([]);
  });

  it("describes every event type in one line", () => {
    const blank = EVENT_TYPES.filter((type) => !/^[^\n|]{8,}$/.test(EVENT_CATALOG[type].description));
    expect(blank).toEqual([]);
  });

  it("has redacted mode replace exactly each event's content fields", () => {
    for (const type of EVENT_TYPES) {
      const { payload, content } = EVENT_CATALOG[type];
      const fields =
        "shape" in payload ? Object.keys(payload.shape) : payload.options.flatMap((o) => Object.keys(o.shape));
      const every = Object.fromEntries(fields.map((field) => [field, "value"]));
      const replaced = Object.entries(redactContent(type, every, "redacted"))
        .filter(([, value]) => value === REDACTED)
        .map(([field]) => field);
      expect(replaced, type).toEqual(fields.filter((field) => (content as readonly string[]).includes(field)));
    }
  });
});

describe("checkEvent (every event frame a test reads)", () => {
  it("takes a payload as the catalog describes it, and an agent's own custom_ event", () => {
    expect(checkEvent(record("todo_list_updated", TODOS)).payload).toEqual(TODOS);
    expect(checkEvent(record("custom_progress", { done: "5" })).event_type).toBe("custom_progress");
  });

  it("refuses a field the catalog does not list, a missing one, and a value of another type", () => {
    expect(errorOf(() => checkEvent(record("todo_list_updated", { ...TODOS, count: 1 }))).message).toMatch(
      /^todo_list_updated \(seq 3\) does not match the event catalog: .*Unrecognized key: "count"/s,
    );
    expect(errorOf(() => checkEvent(record("step_resumed", { step: "turn_1_model" }))).message).toMatch(/attempt/);
    expect(errorOf(() => checkEvent(record("step_resumed", { step: "s", attempt: "2" }))).message).toMatch(/attempt/);
  });

  it("refuses an event type outside the catalog", () => {
    expect(errorOf(() => checkEvent(record("run_finised", {}))).message).toMatch(
      /^run_finised is not in the event catalog/,
    );
  });

  it("takes [REDACTED] for a content field in redacted mode only", () => {
    const redacted = { todos: REDACTED, completed: 1, total: 1 };
    expect(checkEvent(record("todo_list_updated", redacted, "redacted")).payload).toEqual(redacted);
    expect(() => checkEvent(record("todo_list_updated", redacted, "full"))).toThrow(/todos/);
    expect(() => checkEvent(record("todo_list_updated", { ...TODOS, total: REDACTED }, "redacted"))).toThrow(/total/);
  });
});
