// Fuzzing task creation with malformed requests (fast-check): wrong types for each field of the body, unknown
// fields, broken JSON, bytes that are not UTF-8, huge bodies, bad content types, Idempotency-Keys and API keys, bad
// workspace paths and callback URLs, and agent names that are not registered. Whatever arrives, the answer is never
// a 5xx but the 4xx the input calls for, and no task is created.
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { registry } from "../../src/agents/catalog.ts";
import { CreateTaskBody } from "../../src/http/schemas.ts";
import { derivedTaskId } from "../../src/tasks/task-ids.ts";
import {
  anyAuth,
  badIdText,
  createValues,
  encodedId,
  guarded,
  headerText,
  type Posted,
  posted,
  rawPercentId,
  wildText,
} from "../support/fuzz/arbitraries.ts";
import { headerValue, jsonOutcome, NOT_FOUND, OK, utf8 } from "../support/fuzz/oracles.ts";
import { type Case, type Expected, fuzz, type Header, sentSummary } from "../support/fuzz/probe.ts";
import { reviewed } from "../support/fuzz/tasks-under-test.ts";
import { api } from "../support/helpers.ts";

afterAll(() => {
  console.info(sentSummary());
});

describe("fuzzing the API with malformed requests", () => {
  it("refuses malformed task creations with 400, 413 or 415, and creates no task", async () => {
    const idempotencyKeys = new Set<string>();
    const idempotencyKey = fc.oneof(
      { weight: 3, arbitrary: fc.constant<Header[]>([]) },
      {
        weight: 2,
        arbitrary: fc
          .stringMatching(/^[\x21-\x7e]{1,40}$/)
          .map((key): Header[] => [["idempotency-key", `fuzz-${key}`]]),
      },
      {
        weight: 1,
        arbitrary: fc
          .oneof(headerText, fc.constant("k".repeat(256)), fc.constant("a b"), fc.constant(""))
          .map((key): Header[] => [["idempotency-key", key]]),
      },
    );
    // Bodies that pass the schema but not the checks after it: bad workspace paths and callback URLs.
    const BAD_FILES = ["../x", "/etc/passwd", "/workspace", "a/../../b", " ", "a\u0000b", "/workspace/../x"];
    const BAD_URLS = ["ftp://example.com/x", "javascript:alert(1)", "not a url", "http://example.com/cb"]
      .concat(["https://10.0.0.1/cb", "https://[::1]/", "https://localhost/", "https://169.254.169.254/latest"])
      .concat(["file:///etc/passwd", "https://0.0.0.0/", "https://192.168.1.1:8443/", "data:text/plain,hi"]);
    const semantic = fc
      .oneof(
        fc.constantFrom(...BAD_FILES).map((path) => ({ files: { [path]: "x" } })),
        fc.constant({ files: { "a.txt": "1", "/workspace/a.txt": "2" } }),
        fc.constant({ files: { a: "1", "a/b": "2" } }),
        fc.constantFrom(...BAD_URLS).map((url) => ({ webhook: { url } })),
      )
      .map(
        (extra): Posted => ({
          headers: [["content-type", "application/json"]],
          body: utf8.encode(JSON.stringify({ input: "Never run: fuzz", ...extra })),
          semantic: "files" in extra ? "validation_failed" : "invalid_callback_url",
        }),
      );
    const cases = fc
      .tuple(
        anyAuth,
        fc.constantFrom("assistant", "coder", "planner", reviewed),
        fc.oneof({ weight: 12, arbitrary: posted(createValues) }, { weight: 1, arbitrary: semantic }),
        idempotencyKey,
      )
      // Only bodies the schema refuses, or the semantic ones above (every one of which must be refused too).
      .filter(
        ([, , { headers, body, semantic }]) =>
          semantic !== undefined || "error" in jsonOutcome(headers, body, CreateTaskBody),
      )
      .map(([auth, agent, { headers, body, semantic }, key]): Case => {
        const outcome = jsonOutcome(headers, body, CreateTaskBody);
        const route: Expected = "error" in outcome ? outcome.error : { status: [400], codes: [semantic ?? "?"] };
        return {
          probe: {
            method: "POST",
            path: `/v1/agents/${agent}/tasks`,
            headers: [...auth.headers, ...headers, ...key],
            body,
          },
          expected: guarded(auth, "POST", route),
        };
      });
    await fuzz(
      cases.map((c) => {
        const key = headerValue(c.probe.headers, "idempotency-key");
        if (key !== undefined && /^[\x21-\x7e]{1,255}$/.test(key)) idempotencyKeys.add(key);
        return c;
      }),
      900,
    );
    // Had any of them created a task, its key would now name it.
    expect(idempotencyKeys.size).toBeGreaterThan(50);
    for (const key of idempotencyKeys) {
      const id = await derivedTaskId("idempotency", "default", key);
      const res = await api(`/v1/tasks/${id}`);
      expect(res.status, `Idempotency-Key ${key}`).toBe(404);
      await res.body?.cancel();
    }
  }, 60_000);

  it("answers agent names that are not registered with 404 agent_not_found, before reading any body", async () => {
    const names = fc.oneof(
      {
        weight: 6,
        arbitrary: encodedId(fc.oneof(wildText, badIdText)).filter(({ id }) => id === undefined || !registry.has(id)),
      },
      { weight: 1, arbitrary: rawPercentId },
      { weight: 1, arbitrary: fc.constantFrom("assistant", "coder", "planner").map((id) => ({ segment: id, id })) },
    );
    const cases = fc
      .tuple(anyAuth, names, fc.boolean(), posted(createValues))
      .map(([auth, { segment, id }, create, { headers, body }]): Case => {
        const registered = id !== undefined && registry.has(id);
        if (create && !registered) {
          return {
            probe: {
              method: "POST",
              path: `/v1/agents/${segment}/tasks`,
              headers: [...auth.headers, ...headers],
              body,
            },
            expected: guarded(auth, "POST", NOT_FOUND("agent_not_found", "name")),
          };
        }
        return {
          probe: { method: "GET", path: `/v1/agents/${segment}`, headers: auth.headers },
          expected: guarded(auth, "GET", registered ? OK : NOT_FOUND("agent_not_found", "name")),
        };
      });
    await fuzz(cases, 300);
  }, 60_000);
});
