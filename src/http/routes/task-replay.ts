// /v1/tasks/:id/replay (issue 17 §3, docs/evaluations.md#replaying-a-run): POST starts a replay of an ended task,
// its agent's current definition answered by the task's recorded model responses and tool results
// (src/tasks/replay.ts); GET on the replay compares it with the task it replays (src/tasks/run-comparison.ts), or with
// the bundle it was made from (POST /v1/replays, src/http/routes/replays.ts).
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { Hono } from "hono";
import type { TaskObject } from "../../../durable-objects/task-object.ts";
import { openBlobStore } from "../../blob-store/open-blob-store.ts";
import { ApiError } from "../../errors.ts";
import { planReplay } from "../../tasks/replay.ts";
import { type ComparedRun, compareRuns, parseRequestFile, requestFilePath } from "../../tasks/run-comparison.ts";
import { isTerminal, type TaskView } from "../../tasks/task.ts";
import { taskStubFor } from "../../tasks/task-ids.ts";
import { taskInit } from "../../tasks/task-init.ts";
import { visibleAgent } from "../agent-lookup.ts";
import type { AppEnv } from "../app-env.ts";
import { readRecording, replayBundleKey } from "../bundle-replay.ts";
import type { ReplayComparison } from "../responses.ts";
import { creationId, startTask, takeRateToken } from "../task-creation.ts";
import { missingTask, taskStub } from "../task-resource.ts";
import { bundleFileText } from "./task-files.ts";

type Stub = DurableObjectStub<TaskObject>;

function notEnded(task: TaskView): ApiError {
  return new ApiError(
    "run_not_ended",
    `Task ${task.id} is still ${task.status}; it can be replayed once it has ended.`,
  );
}

/** One side of a comparison: the task, its conversation as clients read it, and each model call's request file. */
async function comparedRun(env: AppEnv["Bindings"], stub: Stub, task: TaskView): Promise<ComparedRun> {
  const messages = ((await stub.messages()) ?? []) as MessageParam[];
  const calls = messages.filter((m) => m.role === "assistant").length;
  const requests = await Promise.all(
    Array.from({ length: calls }, async (_, i) => {
      const text = await bundleFileText(env, stub, requestFilePath(i + 1));
      return text === null ? null : parseRequestFile(text);
    }),
  );
  return { status: task.status, result: task.result, messages, requests };
}

export const taskReplayRoutes = new Hono<AppEnv>()
  .post("/:id/replay", async (c) => {
    const { id, stub } = taskStub(c);
    const origin = await stub.get();
    if (!origin) throw await missingTask(stub, id);
    if (!isTerminal(origin.status)) throw notEnded(origin);
    const replay = await planReplay({
      origin,
      checkpoints: (await stub.checkpointList()) ?? [],
      checkpoint: (checkpointId) => stub.forkPoint(checkpointId),
      agent: (name) => visibleAgent(c, name),
      ledger: async (toolUseIds) => {
        const ledger = await stub.toolCallLedger(toolUseIds);
        if (!ledger) throw await missingTask(stub, id);
        return ledger;
      },
    });
    await takeRateToken(c);
    const tenant = c.get("tenant");
    // No body: a replay is named by its task alone (an Idempotency-Key makes a retried request the same replay).
    const { id: replayId, fingerprint } = await creationId(c, {});
    return startTask(c, tenant, taskInit(c.env, { ...replay, id: replayId, fingerprint, tenant }));
  })
  .get("/:id/replay", async (c) => {
    const { id, stub } = taskStub(c);
    const task = await stub.get();
    if (!task) throw await missingTask(stub, id);
    const trigger = task.trigger;
    if (!trigger || !("kind" in trigger) || trigger.kind !== "replay") {
      throw new ApiError("replay_unavailable", `Task ${id} is not a replay (POST /v1/tasks/:id/replay starts one).`);
    }
    if (!isTerminal(task.status)) throw notEnded(task);
    const replay = await comparedRun(c.env, stub, task);
    let recorded: ComparedRun;
    if (trigger.source === "bundle") {
      // A bundle's replay (POST /v1/replays) compares with the bundle it kept, never with a task of that id here.
      const blob = await openBlobStore(c.env).get(replayBundleKey(id));
      if (!blob) throw new ApiError("replay_unavailable", `The bundle that task ${id} replays is no longer stored.`);
      recorded = readRecording(new Uint8Array(await blob.arrayBuffer())).compared;
    } else {
      const originStub = taskStubFor(c.env, c.get("tenant"), trigger.task_id);
      const origin = await originStub.get();
      if (!origin) throw await missingTask(originStub, trigger.task_id);
      recorded = await comparedRun(c.env, originStub, origin);
    }
    const differences = compareRuns(recorded, replay);
    return c.json({
      task_id: id,
      replay_of: trigger.task_id,
      identical: differences.length === 0,
      differences,
    } satisfies ReplayComparison);
  });
