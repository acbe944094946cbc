// Fuzzing what no single route owns (fast-check): random paths, methods and API keys on /v1/tenant and everywhere
// else, and bodies every route refuses (nested too deep, lone surrogates, "__proto__" keys, seed files past the
// workspace's entries) sent to task creation, resume, fork and a hook. Whatever arrives, the answer is never a 5xx
// and never bypasses the API key; a refused body gets 400 naming the field, no task is created, a finished task and
// a waiting one read back exactly as before, and an unknown id's object stays empty. The other fuzz tests:
// test/http/fuzz-tasks.test.ts, fuzz-create.test.ts and fuzz-hooks.test.ts; their kit is in test/support/fuzz/.
import { env } from "cloudflare:workers";
import fc, { type Arbitrary } from "fast-check";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { derivedTaskId } from "../../src/tasks/task-ids.ts";
import {
  anyAuth,
  contentType,
  encodeSegment,
  guarded,
  noiseHeaders,
  WRONG_METHODS,
  wildText,
} from "../support/fuzz/arbitraries.ts";
import { defect, overflowingFiles, type Target, withDefect } from "../support/fuzz/defects.ts";
import { STANDARD_HOOK } from "../support/fuzz/hooks.ts";
import { OK, ROUTE_NOT_FOUND, utf8 } from "../support/fuzz/oracles.ts";
import { type Case, type Expected, fuzz, type Header, sentSummary } from "../support/fuzz/probe.ts";
import {
  expectUnchanged,
  GHOST,
  reviewed,
  startTasksUnderTest,
  type TaskUnderTest,
  tablesOf,
} from "../support/fuzz/tasks-under-test.ts";
import { API_KEY, api, BASE } from "../support/helpers.ts";

let finished: TaskUnderTest;
let waiting: TaskUnderTest;

beforeAll(async () => {
  ({ finished, waiting } = await startTasksUnderTest());
});

afterAll(() => {
  console.info(sentSummary());
});

describe("fuzzing the API with malformed requests", () => {
  it("answers /v1/tenant and random paths, methods and keys with a 4xx, never bypassing the API key", async () => {
    const words = ["v1", "tasks", "agents", "hooks", "tenant", "checkpoints", "messages", "events", "cancel", "fork"]
      .concat(["resume", "deliveries", "redeliver", "artifacts", "workspace", "assistant", "", "..", ".", "%2e%2e"])
      .concat(["%2F", "%2f..%2f", "\\", "..\\..", ";", "%00", "v1%2Ftasks", "*", "?", "#", "%3F", "hooks%2F.."])
      .concat(["trace", "subagents", "workflows", "issue_triage"])
      .concat([GHOST, finished.id, STANDARD_HOOK]);
    const segments = fc.array(
      fc.oneof(
        { weight: 4, arbitrary: fc.constantFrom(...words) },
        { weight: 1, arbitrary: wildText.map(encodeSegment) },
      ),
      { minLength: 0, maxLength: 6 },
    );
    const paths = fc.oneof(
      { weight: 5, arbitrary: segments.map((s) => `/v1/${s.join("/")}`) },
      { weight: 2, arbitrary: segments.map((s) => `/${s.join("/")}`) },
      {
        weight: 1,
        arbitrary: fc.constantFrom(
          "/",
          "/v1",
          "/v1/",
          "/v1/tenant",
          "/v1/tenant/",
          "/v1/agents",
          "//v1/agents",
          "/v1//tenant",
          "/V1/tenant",
          `/v1/hooks/..%2Ftasks%2F${finished.id}`,
          "/v1/hooks/%2e%2e/tenant",
          "/v1/hooks/x/..%2F..%2Ftenant",
        ),
      },
      { weight: 1, arbitrary: fc.integer({ min: 2_000, max: 20_000 }).map((n) => `/v1/${"a/".repeat(n / 2)}`) },
    );
    // What a key-holder's request to some /v1 path can be told, reading or acting (the bodies here are empty).
    const READ_CODES = ["route_not_found", "task_not_found", "agent_not_found", "checkpoint_not_found"].concat([
      "artifact_not_found",
      "workspace_file_not_found",
      "validation_failed",
      "workflow_not_found",
    ]);
    const ACT_CODES = ["route_not_found", "task_not_found", "agent_not_found", "task_already_finished"].concat([
      "delivery_not_found",
      "unsupported_media_type",
      "invalid_json",
      "workflow_not_found",
      // PUT /v1/agents/:name with a body that is not an agent file (an empty one among them).
      "validation_failed",
    ]);
    const methods = fc.oneof(
      { weight: 4, arbitrary: fc.constantFrom("GET", "HEAD") },
      { weight: 2, arbitrary: fc.constantFrom("POST", ...WRONG_METHODS) },
    );
    const cases = fc
      .tuple(anyAuth, paths, methods, noiseHeaders, contentType)
      .map(([auth, path, method, noise, type]): Case => {
        const url = new URL(BASE + path);
        const reading = method === "GET" || method === "HEAD";
        const headers: Header[] = [...auth.headers, ...noise, ...(reading ? [] : type)];
        const normalized = url.pathname;
        let expected: Expected;
        if (normalized.startsWith("/v1/hooks/")) {
          // No key needed there, and only hook routes answer (an unsigned delivery to a real hook is refused).
          expected = { status: [401, 404], codes: ["hook_not_found", "route_not_found", "signature_missing"] };
        } else if (normalized === "/v1" || normalized.startsWith("/v1/")) {
          const routed: Expected = reading
            ? { status: [200, 204, 400, 404], codes: READ_CODES, stream: true }
            : { status: [400, 404, 409, 415], codes: ACT_CODES };
          expected = guarded(auth, method, routed, normalized === "/v1/tenant");
        } else {
          expected = reading && normalized === "/" ? OK : ROUTE_NOT_FOUND;
        }
        return { probe: { method, path, headers }, expected };
      });
    await fuzz(cases, 600);
    expect(await tablesOf(GHOST)).toEqual([]);
    await expectUnchanged(finished);
  }, 60_000);

  it("refuses bodies nested too deep, with lone surrogates or __proto__ keys, or seed files past the workspace's entries, naming the field and changing nothing", async () => {
    // A few keys and delivery ids, each used many times: a task created under any of them would be found at the end.
    const idempotencyKeys = Array.from({ length: 6 }, () => `fuzz-guard-${crypto.randomUUID()}`);
    const deliveries = Array.from({ length: 4 }, () => `msg_${crypto.randomUUID()}`);
    const admin: Header[] = [["authorization", `Bearer ${API_KEY}`]];
    const json: Header[] = [["content-type", "application/json"]];
    const firstCheckpoint = finished.checkpointIds[0] ?? crypto.randomUUID();
    const create: Target = {
      base: { input: "Never run: fuzz", metadata: { suite: "fuzz" } },
      slots: [
        [],
        ["input"],
        ["metadata"],
        ["metadata", "m"],
        ["files"],
        ["files", "src/a.ts"],
        ["tags", 0],
        ["webhook"],
      ],
    };
    create.slots.push(["webhook", "url"], ["webhook", "events", 1], ["unknown"], ["max_turns"]);
    const resume: Target = {
      base: { request_id: "r", action: "modify", tool_input: { todos: [{ content: "x", status: "pending" }] } },
      slots: [[], ["tool_input"], ["tool_input", "path"], ["tool_input", "todos", 0, "content"], ["message"]],
    };
    resume.slots.push(["state_updates", "metadata"], ["state_updates", "messages", 0, "content"], ["request_id"]);
    const fork: Target = {
      base: { checkpoint_id: firstCheckpoint, state_updates: { messages: [{ role: "user", content: "Go on." }] } },
      slots: [[], ["checkpoint_id"], ["state_updates"], ["state_updates", "metadata"], ["state_updates", "messages"]],
    };
    fork.slots.push(["state_updates", "messages", 0, "content", 0, "text"], ["state_updates", "current_agent"]);
    const hook: Target = {
      base: { ticket: { title: "Refund", tags: ["a"] } },
      slots: [[], ["ticket"], ["ticket", "title"], ["ticket", "tags", 1], ["commits", 0, "message"]],
    };
    const signer = new Webhook((env as unknown as Record<string, string>).TEST_STANDARD_HOOK_SECRET as string);
    const defective = (target: Target) =>
      fc.tuple(fc.constantFrom(...target.slots), defect).map(([slot, d]) => withDefect(target.base, slot, d));
    const refused = (field: string): Expected => ({ status: [400], codes: ["validation_failed"], field });
    const cases: Arbitrary<Case> = fc.oneof(
      {
        weight: 3,
        arbitrary: fc
          .tuple(
            fc.constantFrom("assistant", "coder", reviewed),
            defective(create),
            fc.constantFrom(...idempotencyKeys),
          )
          .map(([agent, { body, field }, key]) => ({
            probe: {
              method: "POST",
              path: `/v1/agents/${agent}/tasks`,
              headers: [...admin, ...json, ["idempotency-key", key] as Header],
              body,
            },
            expected: refused(field),
          })),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(overflowingFiles, fc.constantFrom(...idempotencyKeys)).map(([{ files, field }, key]) => ({
          probe: {
            method: "POST",
            path: "/v1/agents/coder/tasks",
            headers: [...admin, ...json, ["idempotency-key", key] as Header],
            body: utf8.encode(JSON.stringify({ input: "Never run: fuzz", files })),
          },
          expected: { status: [400], codes: ["workspace_full"], field },
        })),
      },
      {
        weight: 3,
        arbitrary: fc.tuple(fc.constantFrom(finished, waiting), defective(resume)).map(([task, { body, field }]) => ({
          probe: { method: "POST", path: `/v1/tasks/${task.id}/resume`, headers: [...admin, ...json], body },
          expected: refused(field),
        })),
      },
      {
        weight: 2,
        arbitrary: defective(fork).map(({ body, field }) => ({
          probe: { method: "POST", path: `/v1/tasks/${finished.id}/fork`, headers: [...admin, ...json], body },
          expected: refused(field),
        })),
      },
      {
        weight: 1,
        arbitrary: fc.tuple(defective(hook), fc.constantFrom(...deliveries)).map(([{ body, field }, delivery]) => {
          const signature = signer.sign(delivery, new Date(), new TextDecoder().decode(body));
          const headers: Header[] = [
            ...json,
            ["webhook-id", delivery],
            ["webhook-timestamp", String(Math.floor(Date.now() / 1000))],
            ["webhook-signature", signature],
          ];
          return {
            probe: { method: "POST", path: `/v1/hooks/${STANDARD_HOOK}`, headers, body },
            expected: refused(field),
          };
        }),
      },
    );
    await fuzz(cases, 250);
    await expectUnchanged(finished);
    await expectUnchanged(waiting);
    // Had any of them created a task, its Idempotency-Key or delivery id would now name it.
    for (const [name, id] of [
      ...idempotencyKeys.map(
        (key) => [`Idempotency-Key ${key}`, derivedTaskId("idempotency", "default", key)] as const,
      ),
      ...deliveries.map((d) => [`delivery ${d}`, derivedTaskId("hook", "default", STANDARD_HOOK, d)] as const),
    ]) {
      const res = await api(`/v1/tasks/${await id}`);
      expect(res.status, name).toBe(404);
      await res.body?.cancel();
    }
  }, 60_000);
});
