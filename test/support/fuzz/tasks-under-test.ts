// The tasks the fuzz tests probe, and how a test proves the fuzzing changed nothing: everything the API says about a
// task (its resource, listings, checkpoints, events and alarm) is read before and after, and must be equal; an
// unknown id's object must stay empty. Importing this module registers the `reviewed` agent (manual approvals).
import { runInDurableObject } from "cloudflare:test";
import { expect } from "vitest";
import type { z } from "zod";
import {
  type ArtifactList,
  ArtifactListSchema,
  type CheckpointList,
  CheckpointListSchema,
  CheckpointSchema,
  DeliveryListSchema,
  MessageListSchema,
  type TaskResource,
  TaskResourceSchema,
  type WorkspaceList,
  WorkspaceListSchema,
} from "../../../src/http/responses.ts";
import {
  api,
  defineAgent,
  done,
  type EventBody,
  parseBody,
  parseEvent,
  readSse,
  script,
  settledAlarm,
  startTask,
  stubFor,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../helpers.ts";

/** Everything the API says about a task, read twice to compare. */
interface Snapshot {
  task: TaskResource;
  reads: Record<string, unknown>;
  events: EventBody[];
  alarm: number | null;
}

/** A read that must succeed, its body checked against its response schema. */
export async function readJson<S extends z.ZodType>(path: string, schema: S): Promise<z.output<S>> {
  const res = await api(path);
  expect(res.status, path).toBe(200);
  return parseBody(res, schema);
}

/** What each of a task's listings is read with. */
const LISTINGS = {
  messages: MessageListSchema,
  checkpoints: CheckpointListSchema,
  deliveries: DeliveryListSchema,
  artifacts: ArtifactListSchema,
  workspace: WorkspaceListSchema,
} as const;

async function snapshotOf(id: string): Promise<Snapshot> {
  const task = await readJson(`/v1/tasks/${id}`, TaskResourceSchema);
  const reads: Record<string, unknown> = {};
  for (const [what, schema] of Object.entries(LISTINGS)) {
    reads[what] = await readJson(`/v1/tasks/${id}/${what}`, schema);
  }
  const list = reads.checkpoints as CheckpointList;
  for (const { checkpoint_id } of list.checkpoints) {
    reads[`checkpoint ${checkpoint_id}`] = await readJson(
      `/v1/tasks/${id}/checkpoints/${checkpoint_id}`,
      CheckpointSchema,
    );
  }
  const last = task.last_event_seq;
  // A waiting task's stream stays open: read up to its newest event.
  const frames = await readSse(await api(`/v1/tasks/${id}/events`), (f) => parseEvent(f.data).seq >= last);
  const alarm = await runInDurableObject(stubFor(id), (_instance, state) => state.storage.getAlarm());
  return { task, reads, events: frames.map((f) => parseEvent(f.data)), alarm };
}

/** Whether the object of this task id holds anything at all (an unknown id must not even get a schema). */
export async function tablesOf(id: string): Promise<unknown[]> {
  return runInDurableObject(stubFor(id), (_instance, state) =>
    state.storage.sql.exec("SELECT name FROM sqlite_master").toArray(),
  );
}

export interface TaskUnderTest {
  id: string;
  snapshot: Snapshot;
  checkpointIds: string[];
  /** Checkpoints between a model turn and its tool calls (a fork from one cannot add messages). */
  betweenCalls: string[];
  artifactPaths: string[];
  /** Its workspace files, as store paths ("/notes/readme.md"). */
  files: string[];
}

async function underTest(id: string): Promise<TaskUnderTest> {
  // The first read of a finished task's artifacts completes its bundle; the snapshot is taken after that.
  const { expires_at } = await readJson(`/v1/tasks/${id}/artifacts`, ArtifactListSchema).then(() =>
    readJson(`/v1/tasks/${id}`, TaskResourceSchema),
  );
  // And after its directory report: then the alarm is its expiry (a finished task) or none (a waiting one).
  await settledAlarm(id, expires_at === null ? null : Date.parse(expires_at));
  const snapshot = await snapshotOf(id);
  const { checkpoints } = snapshot.reads.checkpoints as CheckpointList;
  const { artifacts } = snapshot.reads.artifacts as ArtifactList;
  const workspace = snapshot.reads.workspace as WorkspaceList;
  return {
    id,
    snapshot,
    checkpointIds: checkpoints.map((c) => c.checkpoint_id),
    betweenCalls: checkpoints.filter((c) => c.next_action === "tool_calls").map((c) => c.checkpoint_id),
    artifactPaths: artifacts.map((a) => a.path),
    files: workspace.files.filter((f) => f.type === "file").map((f) => `/${f.path}`),
  };
}

export async function expectUnchanged(task: TaskUnderTest): Promise<void> {
  expect(await snapshotOf(task.id)).toStrictEqual(task.snapshot);
}

export const SEEDED_FILE = "notes/readme.md";
export const GHOST = crypto.randomUUID();
export const reviewed = defineAgent({ allowedTools: ["TodoWrite"], permissionMode: "manual" });

/**
 * The tasks the fuzz tests probe (call it in a beforeAll): one that finished, with a seeded file and its bundle, and
 * one waiting for an approval of its TodoWrite call. Each is read back whole, to be compared after the fuzzing.
 */
export async function startTasksUnderTest(): Promise<{ finished: TaskUnderTest; waiting: TaskUnderTest }> {
  const marker = uniqueMarker("fuzz-finished");
  await script(marker, [{ content: [{ type: "text", text: "Read and summarized." }] }]);
  const first = await startTask("assistant", `Summarize ${marker}`, {
    files: { [SEEDED_FILE]: "# Fuzz\n" },
    metadata: { suite: "fuzz" },
  });
  const waitMarker = uniqueMarker("fuzz-waiting");
  await script(waitMarker, [
    { content: [toolUse("TodoWrite", { todos: [{ content: "Hold", status: "pending" }] })], stop_reason: "tool_use" },
    done,
  ]);
  const second = await startTask(reviewed, `plan ${waitMarker}`);
  expect((await waitForTask(first.id)).status).toBe("completed");
  expect((await waitForTask(second.id)).status).toBe("input_required");
  return { finished: await underTest(first.id), waiting: await underTest(second.id) };
}
