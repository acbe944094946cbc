// The client ends a stream where the server does: its list of terminal events is the event catalog's.
import { describe, expect, it } from "vitest";
import { TERMINAL_EVENT_TYPES as CLIENT_TERMINAL } from "../../client/src/index.ts";
import { TERMINAL_EVENT_TYPES as SERVER_TERMINAL } from "../../src/events/event-record.ts";

describe("the client's terminal events", () => {
  it("are exactly the event catalog's terminal events", () => {
    expect([...CLIENT_TERMINAL].sort()).toEqual([...SERVER_TERMINAL].sort());
  });
});
