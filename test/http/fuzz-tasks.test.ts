// Fuzzing the routes of a task with malformed requests (fast-check): random JSON and wrong types for each field of
// the resume and fork bodies, bytes that are not UTF-8, bad or missing headers, bad ids, query strings and cursors,
// paths of files and artifacts. Whatever arrives, the answer is never a 5xx but the status and code the input calls
// for, and nothing changes: a finished task and a waiting one read back exactly as before (the waiting one still
// waits), and an unknown id's object stays empty.
import fc, { type Arbitrary } from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { registry } from "../../src/agents/catalog.ts";
import { TaskResourceSchema } from "../../src/http/responses.ts";
import { ForkBody, ResumeBody, TaskIdParam, WorkspacePath } from "../../src/http/schemas.ts";
import {
  type Auth,
  anyAuth,
  anyJson,
  asJson,
  badAuth,
  badIdText,
  cursorHeaderText,
  encodedId,
  encodeSegment,
  forkValues,
  guarded,
  type IdSegment,
  isDotSegment,
  noiseHeaders,
  numberText,
  oneOf,
  posted,
  queryFor,
  rawPercentId,
  readAuth,
  resumeValues,
  WRONG_METHODS,
  wellFormedResume,
  wildText,
} from "../support/fuzz/arbitraries.ts";
import {
  cursorOf,
  isInvalidCursor,
  jsonOutcome,
  NOT_FOUND,
  OK,
  orLineBreakBug,
  ROUTE_NOT_FOUND,
  resumeRefusal,
  VALIDATION_FAILED,
  waitIsValid,
} from "../support/fuzz/oracles.ts";
import { type Case, type Expected, fuzz, type Header, sentSummary } from "../support/fuzz/probe.ts";
import {
  expectUnchanged,
  GHOST,
  readJson,
  SEEDED_FILE,
  startTasksUnderTest,
  type TaskUnderTest,
  tablesOf,
} from "../support/fuzz/tasks-under-test.ts";

let finished: TaskUnderTest;
let waiting: TaskUnderTest;

beforeAll(async () => {
  ({ finished, waiting } = await startTasksUnderTest());
});

afterAll(() => {
  console.info(sentSummary());
});

// ---- The routes -------------------------------------------------------------------------------------------------

/** Cases against one task's routes; `mode` keeps requests that would act on a waiting task out. */
function taskCases(task: TaskUnderTest, mode: "finished" | "waiting"): Arbitrary<Case> {
  const base = `/v1/tasks/${task.id}`;
  const lastSeq = task.snapshot.task.last_event_seq;
  const isWaiting = mode === "waiting";
  const withAuth = (auth: Arbitrary<Auth>, build: (auth: Auth) => Arbitrary<Case>): Arbitrary<Case> =>
    auth.chain(build);

  const getTask = withAuth(anyAuth, (auth) =>
    fc.tuple(queryFor("wait", numberText), noiseHeaders).map(([{ query, value }, noise]) => ({
      probe: { method: "GET", path: base + query, headers: [...auth.headers, ...noise] },
      expected: guarded(auth, "GET", value === undefined || waitIsValid(value) ? OK : VALIDATION_FAILED("wait")),
    })),
  );

  const eventStream = withAuth(anyAuth, (auth) =>
    fc
      .tuple(fc.option(cursorHeaderText, { nil: undefined }), queryFor("after", numberText), noiseHeaders)
      .filter(([header, { value }]) => !isWaiting || isInvalidCursor(cursorOf(header, value)))
      .map(([header, { query, value }, noise]): Case => {
        const cursor = cursorOf(header, value);
        const route: Expected = isInvalidCursor(cursor)
          ? VALIDATION_FAILED(cursor.field)
          : { status: [(cursor ?? 0) >= lastSeq ? 204 : 200], stream: true };
        const headers: Header[] = [...auth.headers, ...noise];
        if (header !== undefined) headers.push(["last-event-id", header]);
        return {
          probe: { method: "GET", path: `${base}/events${query}`, headers },
          expected: guarded(auth, "GET", route),
        };
      }),
  );

  // A waiting task is canceled by any admin request: only keys that may not act get to try.
  const cancel = withAuth(isWaiting ? fc.oneof(readAuth, badAuth) : anyAuth, (auth) =>
    posted(anyJson).map(({ headers, body }) => ({
      probe: { method: "POST", path: `${base}/cancel`, headers: [...auth.headers, ...headers], body },
      expected: guarded(auth, "POST", { status: [409], codes: ["task_already_finished"] }),
    })),
  );

  const resume = withAuth(anyAuth, (auth) =>
    fc
      .oneof(
        { weight: 6, arbitrary: posted(resumeValues) },
        {
          weight: 2,
          arbitrary: fc
            .oneof(
              wellFormedResume,
              fc.constantFrom<unknown>(
                { action: "modify" },
                { action: "approve", state_updates: { current_agent: "assistant" } },
                { action: "reject", message: "no", state_updates: { current_agent: "" } },
              ),
            )
            .map(asJson),
        },
      )
      .map(({ headers, body }) => {
        const outcome = jsonOutcome(headers, body, ResumeBody);
        let route: Expected;
        if ("error" in outcome) route = outcome.error;
        else {
          const value = outcome.value as ResumeBody;
          // A task waiting for an approval refuses modify without new arguments; one that waits for nothing, all.
          const unmodified = value.action === "modify" && !value.tool_input && !value.state_updates;
          route =
            resumeRefusal(value) ??
            (isWaiting && unmodified
              ? VALIDATION_FAILED("tool_input")
              : { status: [409], codes: ["task_not_waiting"] });
        }
        return {
          probe: { method: "POST", path: `${base}/resume`, headers: [...auth.headers, ...headers], body },
          expected: guarded(auth, "POST", route),
        };
      })
      // A resume that would be accepted must never reach a waiting task (it would resume it).
      .filter(({ expected }) => !isWaiting || !expected.status.includes(409)),
  );

  const unregistered = wildText.filter((name) => !registry.has(name));
  const fork = withAuth(anyAuth, (auth) =>
    fc
      .oneof(
        { weight: 6, arbitrary: posted(forkValues(task.checkpointIds)) },
        {
          weight: 1,
          arbitrary: fc
            .tuple(
              oneOf(task.checkpointIds),
              unregistered.filter((n) => n.length > 0 && n.length <= 64),
            )
            .map(([checkpoint_id, current_agent]) => asJson({ checkpoint_id, state_updates: { current_agent } })),
        },
        // Messages cannot join a conversation between a model turn and its tool calls.
        ...(task.betweenCalls.length === 0
          ? []
          : [
              fc
                .tuple(
                  oneOf(task.betweenCalls),
                  fc.array(
                    fc.record({ role: fc.constantFrom("user", "assistant"), content: fc.string({ minLength: 1 }) }),
                    { minLength: 1, maxLength: 3 },
                  ),
                )
                .map(([checkpoint_id, messages]) => asJson({ checkpoint_id, state_updates: { messages } })),
            ]),
      )
      .map(({ headers, body }) => {
        const outcome = jsonOutcome(headers, body, ForkBody);
        let route: Expected;
        if ("error" in outcome) route = outcome.error;
        else {
          const { checkpoint_id, state_updates } = outcome.value as ForkBody;
          const agent = state_updates?.current_agent;
          if (!task.checkpointIds.includes(checkpoint_id)) route = NOT_FOUND("checkpoint_not_found", "checkpoint_id");
          else if (agent !== undefined && !registry.has(agent))
            route = NOT_FOUND("agent_not_found", "state_updates.current_agent");
          else if (task.betweenCalls.includes(checkpoint_id) && state_updates?.messages?.length)
            route = VALIDATION_FAILED("state_updates.messages");
          else route = { status: [202] };
        }
        return {
          probe: { method: "POST", path: `${base}/fork`, headers: [...auth.headers, ...headers], body },
          expected: guarded(auth, "POST", route),
        };
      })
      // A fork that would be accepted creates a task: never send one.
      .filter(({ expected }) => !expected.status.includes(202)),
  );

  const segment = encodedId(badIdText).filter(({ id }) => id === undefined || !task.checkpointIds.includes(id));
  const checkpoint = withAuth(anyAuth, (auth) =>
    fc.tuple(fc.oneof(segment, rawPercentId), noiseHeaders).map(([{ segment: s }, noise]) => ({
      probe: { method: "GET", path: `${base}/checkpoints/${s}`, headers: [...auth.headers, ...noise] },
      expected: guarded(auth, "GET", NOT_FOUND("checkpoint_not_found", "checkpoint_id")),
    })),
  );

  const redeliver = withAuth(anyAuth, (auth) =>
    fc
      .tuple(
        fc.oneof(
          segment,
          rawPercentId,
          fc.uuid().map((id) => ({ segment: id, id })),
        ),
        posted(anyJson),
      )
      .map(([{ segment: s }, { headers, body }]) => ({
        probe: {
          method: "POST",
          path: `${base}/deliveries/${s}/redeliver`,
          headers: [...auth.headers, ...headers],
          body,
        },
        expected: guarded(auth, "POST", NOT_FOUND("delivery_not_found", "delivery_id")),
      })),
  );

  // File paths: segments of anything but "." and "..", joined; what the Worker reads is their decoded join.
  const pathSegment = fc
    .oneof(
      fc.string({ maxLength: 12 }),
      fc.string({ unit: "grapheme", maxLength: 6 }),
      fc.constantFrom(
        "events.jsonl",
        "notes",
        "readme.md",
        "workspace",
        "artifacts",
        "%",
        "\\",
        "...",
        "a\u0000b",
        "a\nb.txt",
      ),
    )
    .filter((s) => !isDotSegment(s));
  const filePath = fc.oneof(
    fc.array(pathSegment, { minLength: 1, maxLength: 5 }).map((parts) => parts.join("/")),
    fc.constantFrom(SEEDED_FILE, `/workspace/${SEEDED_FILE}`, "notes", "workspace", "/workspace", "//x", "a//b"),
    oneOf(task.artifactPaths),
    fc.integer({ min: 513, max: 3_000 }).map((n) => "p".repeat(n)),
  );
  const encodePath = (path: string) => path.split("/").map(encodeSegment).join("/");

  const artifact = withAuth(anyAuth, (auth) =>
    fc
      .tuple(filePath, noiseHeaders)
      .filter(([path]) => path.length > 0)
      .map(([path, noise]) => {
        const valid = path.length <= 512 && path.split("/").every((s) => s.length > 0 && s !== "." && s !== "..");
        const route: Expected = !valid
          ? VALIDATION_FAILED("path")
          : task.artifactPaths.includes(path)
            ? OK
            : NOT_FOUND("artifact_not_found", "path");
        return {
          probe: { method: "GET", path: `${base}/artifacts/${encodePath(path)}`, headers: [...auth.headers, ...noise] },
          expected: guarded(auth, "GET", orLineBreakBug(path, route)),
        };
      }),
  );

  const workspaceFile = withAuth(anyAuth, (auth) =>
    fc
      .tuple(filePath, noiseHeaders)
      .filter(([path]) => path.length > 0)
      .map(([path, noise]) => {
        const parsed = WorkspacePath.safeParse(path);
        const route: Expected = !parsed.success
          ? VALIDATION_FAILED("path")
          : task.files.includes(parsed.data)
            ? OK
            : NOT_FOUND("workspace_file_not_found", "path");
        return {
          probe: { method: "GET", path: `${base}/workspace/${encodePath(path)}`, headers: [...auth.headers, ...noise] },
          expected: guarded(auth, "GET", orLineBreakBug(path, route)),
        };
      }),
  );

  const lists = withAuth(anyAuth, (auth) =>
    fc
      .tuple(
        fc.constantFrom("messages", "checkpoints", "deliveries", "artifacts", "workspace", "trace", "subagents"),
        fc.oneof(queryFor("page", numberText), queryFor("wait", numberText)),
        fc.constantFrom("GET", "HEAD"),
        noiseHeaders,
      )
      .map(([what, { query }, method, noise]) => ({
        probe: { method, path: `${base}/${what}${query}`, headers: [...auth.headers, ...noise] },
        expected: guarded(auth, method, OK),
      })),
  );

  const wrongMethod = withAuth(anyAuth, (auth) =>
    fc
      .tuple(
        fc.constantFrom(
          "",
          "/messages",
          "/events",
          "/cancel",
          "/checkpoints",
          "/fork",
          "/resume",
          "/workspace",
          "/trace",
        ),
        fc.constantFrom(...WRONG_METHODS),
      )
      .map(([suffix, method]) => ({
        probe: { method, path: base + suffix, headers: auth.headers },
        expected: guarded(auth, method, ROUTE_NOT_FOUND),
      })),
  );

  return fc.oneof(
    getTask,
    eventStream,
    cancel,
    { weight: 2, arbitrary: resume },
    { weight: 2, arbitrary: fork },
    checkpoint,
    redeliver,
    artifact,
    workspaceFile,
    lists,
    wrongMethod,
  );
}

describe("fuzzing the API with malformed requests", () => {
  it("answers every request to a finished task with a 4xx (or its data) and leaves the task as it was", async () => {
    await fuzz(taskCases(finished, "finished"), 900);
    await expectUnchanged(finished);
  }, 60_000);

  it("refuses every malformed resume, fork and unauthorized act on a waiting task, which keeps waiting", async () => {
    await fuzz(taskCases(waiting, "waiting"), 600);
    await expectUnchanged(waiting);
    const now = await readJson(`/v1/tasks/${waiting.id}`, TaskResourceSchema);
    expect(now.status).toBe("input_required");
    expect(now.pending_input).toMatchObject({ kind: "approval", tool_name: "TodoWrite" });
  }, 60_000);

  it("answers a malformed or unknown task id with 404 task_not_found on every route, writing nothing", async () => {
    const routes = ["", "/messages", "/events", "/cancel", "/checkpoints", "/checkpoints/x", "/fork", "/resume"]
      .concat(["/deliveries", "/deliveries/x/redeliver", "/artifacts", "/artifacts/events.jsonl", "/workspace"])
      .concat(["/workspace/a.txt", "/trace", "/subagents"]);
    const POSTS = new Set(["/cancel", "/fork", "/resume", "/deliveries/x/redeliver"]);
    const ids = fc.oneof(
      { weight: 4, arbitrary: encodedId(badIdText) },
      { weight: 1, arbitrary: rawPercentId },
      { weight: 2, arbitrary: fc.constant<IdSegment>({ segment: GHOST, id: GHOST }) },
      { weight: 1, arbitrary: fc.uuid({ version: 4 }).map((id) => ({ segment: id, id })) },
    );
    const cases = fc
      .tuple(
        anyAuth,
        ids,
        fc.constantFrom(...routes),
        posted(fc.oneof(resumeValues, forkValues([]))),
        queryFor("wait", numberText),
      )
      .map(([auth, { segment, id }, suffix, { headers, body }, { query, value }]): Case => {
        const method = POSTS.has(suffix) ? "POST" : "GET";
        // The id is checked first: a malformed one (or one whose percent-encoding is broken) is simply not found.
        const wellFormed = id !== undefined && TaskIdParam.safeParse(id).success;
        let route: Expected = NOT_FOUND("task_not_found", "id");
        if (wellFormed && suffix === "" && value !== undefined && !waitIsValid(value))
          route = VALIDATION_FAILED("wait");
        if (wellFormed && (suffix === "/fork" || suffix === "/resume")) {
          const outcome = jsonOutcome(headers, body, suffix === "/fork" ? ForkBody : ResumeBody);
          if ("error" in outcome) route = outcome.error;
          else if (suffix === "/resume") route = resumeRefusal(outcome.value as ResumeBody) ?? route;
        }
        const path = `/v1/tasks/${segment}${suffix}${suffix === "" ? query : ""}`;
        return method === "POST"
          ? {
              probe: { method, path, headers: [...auth.headers, ...headers], body },
              expected: guarded(auth, method, route),
            }
          : { probe: { method, path, headers: auth.headers }, expected: guarded(auth, method, route) };
      });
    await fuzz(cases, 600);
    expect(await tablesOf(GHOST)).toEqual([]);
  }, 60_000);
});
