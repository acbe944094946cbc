// POST /v1/replays (issue 17 §3, docs/evaluations.md#replaying-a-bundle): replays a run from its bundle, the tar that
// GET /v1/tasks/:id/bundle downloads, on a deployment where its task need not exist. The bundle is read into the
// same ReplayRequest a replay of the task itself is planned from (src/http/bundle-replay.ts, src/tasks/replay.ts),
// kept under the replay's run prefix for GET /v1/tasks/:id/replay's comparison, and the replay starts through the
// same task creation as every other task (src/http/task-creation.ts).
import { Hono } from "hono";
import { openBlobStore } from "../../blob-store/open-blob-store.ts";
import { ApiError } from "../../errors.ts";
import { toHex } from "../../lib/sha256.ts";
import { planReplay } from "../../tasks/replay.ts";
import { taskStubFor } from "../../tasks/task-ids.ts";
import { taskInit } from "../../tasks/task-init.ts";
import { visibleAgent } from "../agent-lookup.ts";
import type { AppEnv } from "../app-env.ts";
import { bundleReplayRequest, MAX_BUNDLE_BYTES, readRecording, replayBundleKey } from "../bundle-replay.ts";
import { creationId, startTask, takeRateToken } from "../task-creation.ts";
import { bodyBytes } from "../validation.ts";

export const replayRoutes = new Hono<AppEnv>().post("/", async (c) => {
  if (!/^application\/(x-)?tar\s*(;|$)/i.test(c.req.header("content-type") ?? "")) {
    throw new ApiError(
      "unsupported_media_type",
      "Send the run bundle as it was downloaded, with 'Content-Type: application/x-tar'.",
      "content-type",
    );
  }
  const agentName = c.req.query("agent");
  if (agentName !== undefined && agentName.trim() === "") {
    throw new ApiError("validation_failed", "agent, when given, names the agent to replay with.", "agent");
  }
  const bundle = await bodyBytes(c, MAX_BUNDLE_BYTES);
  const recording = readRecording(bundle);
  const replay = await planReplay(bundleReplayRequest(recording, (name) => visibleAgent(c, name), agentName));
  await takeRateToken(c);
  const tenant = c.get("tenant");
  // The request is the bundle and the agent: a retry with the same Idempotency-Key and bundle is the same replay.
  const digest = toHex(new Uint8Array(await crypto.subtle.digest("SHA-256", bundle)));
  const { id, fingerprint } = await creationId(c, { bundle_sha256: digest, agent: agentName ?? null });
  // Kept before the replay exists, so that its comparison always finds it. A retry under an Idempotency-Key whose
  // replay exists already writes nothing: another bundle there would change what that replay is compared with.
  const exists = fingerprint !== undefined && (await taskStubFor(c.env, tenant, id).get()) !== null;
  if (!exists) await openBlobStore(c.env).put(replayBundleKey(id), bundle, { contentType: "application/x-tar" });
  return startTask(c, tenant, taskInit(c.env, { ...replay, id, fingerprint, tenant }));
});
