// Fuzzing inbound hook deliveries (fast-check): Standard Webhooks and GitHub signature headers missing, malformed
// or wrong, unknown hook ids, bodies that are not UTF-8 or past the hook's limit, API keys (which hooks ignore) and
// methods no hook takes. Whatever arrives, the answer is never a 5xx but the 4xx the input calls for, and no
// delivery starts a task.
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { derivedTaskId } from "../../src/tasks/task-ids.ts";
import {
  adminAuth,
  anyJson,
  badAuth,
  badIdText,
  encodedId,
  headerText,
  posted,
  rawPercentId,
} from "../support/fuzz/arbitraries.ts";
import { GITHUB_HOOK, STANDARD_HOOK } from "../support/fuzz/hooks.ts";
import { headerValue, NOT_FOUND, ROUTE_NOT_FOUND, strictUtf8, utf8 } from "../support/fuzz/oracles.ts";
import { type Case, type Expected, fuzz, type Header, sentSummary } from "../support/fuzz/probe.ts";
import { api } from "../support/helpers.ts";

/** A hook delivery's body limit (1 MiB). */
const HOOK_BODY_LIMIT = 1024 * 1024;

afterAll(() => {
  console.info(sentSummary());
});

describe("fuzzing the API with malformed requests", () => {
  it("refuses hook deliveries that are unsigned, badly signed, not UTF-8 or too large, and starts nothing", async () => {
    const deliveries = new Set<string>();
    const now = () => Math.floor(Date.now() / 1000);
    const standardHeaders = fc.record(
      {
        "webhook-id": fc.oneof(fc.constant(`msg_${crypto.randomUUID()}`), headerText),
        "webhook-timestamp": fc.oneof(
          fc.constant(String(now())),
          fc.integer({ min: -1e12, max: 1e12 }).map(String),
          fc.constantFrom("", "abc", "1e9", `${now()}.5`, "-1", "99999999999999999999"),
          headerText,
        ),
        "webhook-signature": fc.oneof(
          fc.base64String({ minLength: 4, maxLength: 64 }).map((s) => `v1,${s}`),
          fc.constantFrom("", "v1,", "v1", "v2,abc", "v1,!!!", `v1,${"A".repeat(44)} v1,${"B".repeat(44)}`),
          headerText,
        ),
      },
      { requiredKeys: [] },
    );
    const hex = fc.string({ unit: fc.constantFrom(..."0123456789abcdef"), minLength: 64, maxLength: 64 });
    const githubHeaders = fc.record(
      {
        "x-hub-signature-256": fc.oneof(
          hex.map((h) => `sha256=${h}`),
          fc.constantFrom("", "sha256=", "sha1=ab"),
          headerText,
        ),
        "x-github-delivery": fc.oneof(fc.uuid(), headerText),
        "x-github-event": fc.oneof(fc.constantFrom("ping", "push", "issues", ""), headerText),
      },
      { requiredKeys: [] },
    );
    const hookIds = fc.oneof(
      { weight: 3, arbitrary: fc.constant({ segment: STANDARD_HOOK, id: STANDARD_HOOK }) },
      { weight: 3, arbitrary: fc.constant({ segment: GITHUB_HOOK, id: GITHUB_HOOK }) },
      { weight: 2, arbitrary: encodedId(badIdText) },
      { weight: 1, arbitrary: rawPercentId },
    );
    const bigBody = fc
      .integer({ min: HOOK_BODY_LIMIT - 2, max: HOOK_BODY_LIMIT + 4_096 })
      .map((n) => utf8.encode(`"${"a".repeat(Math.max(0, n - 2))}"`));
    const cases = fc
      .tuple(
        hookIds,
        fc.oneof(
          standardHeaders,
          githubHeaders,
          fc.tuple(standardHeaders, githubHeaders).map(([a, b]) => ({ ...a, ...b })),
        ),
        fc.oneof(
          { weight: 12, arbitrary: posted(anyJson) },
          {
            weight: 1,
            arbitrary: bigBody.map((body) => ({ headers: [["content-type", "application/json"]] as Header[], body })),
          },
        ),
        fc.oneof(
          { weight: 3, arbitrary: fc.constant<Header[]>([]) },
          { weight: 1, arbitrary: badAuth.map((a) => a.headers) },
          { weight: 1, arbitrary: adminAuth.map((a) => a.headers) },
        ),
        fc.oneof(
          { weight: 12, arbitrary: fc.constant("POST") },
          { weight: 1, arbitrary: fc.constantFrom("GET", "PUT", "DELETE") },
        ),
      )
      .map(([{ segment, id }, signed, { headers, body }, auth, method]): Case => {
        const all: Header[] = [...Object.entries(signed), ...headers, ...auth];
        const hook = id === STANDARD_HOOK ? "standard" : id === GITHUB_HOOK ? "github" : null;
        const path = `/v1/hooks/${segment}`;
        if (method !== "POST") return { probe: { method, path, headers: all }, expected: ROUTE_NOT_FOUND };
        let expected: Expected;
        const declared = Number(headerValue(all, "content-length"));
        let text: string | undefined;
        try {
          text = strictUtf8.decode(body ?? new Uint8Array());
        } catch {
          text = undefined;
        }
        if (hook === null) expected = NOT_FOUND("hook_not_found", "hook_id");
        else if ((Number.isFinite(declared) && declared > HOOK_BODY_LIMIT) || (body?.byteLength ?? 0) > HOOK_BODY_LIMIT)
          expected = { status: [413], codes: ["payload_too_large"] };
        else if (text === undefined) expected = { status: [400], codes: ["invalid_json"] };
        else {
          const names =
            hook === "standard"
              ? ["webhook-id", "webhook-timestamp", "webhook-signature"]
              : ["x-hub-signature-256", "x-github-delivery"];
          const missing = names.some((n) => !headerValue(all, n));
          expected = missing
            ? { status: [401], codes: ["signature_missing"], field: "signature" }
            : { status: [401], codes: ["signature_invalid", "timestamp_out_of_tolerance"], field: "signature" };
          const delivery = headerValue(all, hook === "standard" ? "webhook-id" : "x-github-delivery");
          if (delivery) deliveries.add(`${id}\u0000${delivery}`);
        }
        return { probe: { method, path, headers: all, body }, expected };
      });
    await fuzz(cases, 500);
    // A delivery that had started a task would have the task its id names.
    expect(deliveries.size).toBeGreaterThan(50);
    for (const entry of deliveries) {
      const [hookId = "", delivery = ""] = entry.split("\u0000");
      const id = await derivedTaskId("hook", "default", hookId, delivery);
      const res = await api(`/v1/tasks/${id}`);
      expect(res.status, `${hookId} delivery ${delivery}`).toBe(404);
      await res.body?.cancel();
    }
  }, 60_000);
});
