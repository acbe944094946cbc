// The one mapping of errors to response bodies (src/http/errors.ts) for what no route test can provoke here: a
// Durable Object call that the platform marks transient (the object reset or overloaded) is a 503 the client may
// retry, not a 500; anything else unexpected stays a 500 that hides its message.
import { describe, expect, it } from "vitest";
import { errorBody } from "../../src/http/errors.ts";

/** An error as a Durable Object stub throws one on Cloudflare: an Error with the platform's flags. */
function objectError(flags: Record<string, boolean>): Error {
  return Object.assign(new Error("Durable Object reset because its code was updated."), flags);
}

describe("errorBody", () => {
  it.each([
    ["retryable", { retryable: true }],
    ["reset", { durableObjectReset: true }],
    ["overloaded", { overloaded: true, retryable: false }],
  ])("answers a %s object error 503 object_unavailable without its internal message", (_, flags) => {
    const { status, body } = errorBody("req-1", objectError(flags));
    expect(status).toBe(503);
    expect(body.error.code).toBe("object_unavailable");
    expect(body.error.request_id).toBe("req-1");
    expect(body.error.message).not.toContain("code was updated");
  });

  it("keeps any other unexpected error a 500 internal_error", () => {
    for (const error of [new Error("boom"), objectError({ retryable: false, remote: true }), "text"]) {
      const { status, body } = errorBody("req-2", error);
      expect(status).toBe(500);
      expect(body.error.code).toBe("internal_error");
    }
  });
});
