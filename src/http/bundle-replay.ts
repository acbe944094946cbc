// Replaying a run from its bundle (POST /v1/replays, docs/evaluations.md#replaying-a-bundle): the tar that
// GET /v1/tasks/:id/bundle downloads, read into what planReplay takes (src/tasks/replay.ts) and into the recorded side
// of the comparison (src/tasks/run-comparison.ts), so that a run recorded on one deployment replays on another
// (`npm run dev` on a laptop) where its task does not exist. Everything is read from the bundle's own files:
// task.json (the task), checkpoints.json (the conversation, each model response, each tool result), events.jsonl
// (what task.json lacks: the model, metadata, limits, redaction mode; whether it was a workflow's run or a session)
// and the model calls' request files (the comparison's system prompt and tools). The bytes are a client's: each file
// is validated, and a bundle that is not a usable recording is a 4xx naming the file.
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import { ApiError } from "../errors.ts";
import type { JsonObject } from "../lib/json.ts";
import { BUNDLE_FORMAT_VERSION, BUNDLE_MANIFEST, runPrefix } from "../run-bundle/run-bundle.ts";
import { tarFiles } from "../run-bundle/tar.ts";
import { MessageContentSchema } from "../runtime/conversation.ts";
import type { ReplayOrigin, ReplayRequest } from "../tasks/replay.ts";
import { type ComparedRun, parseRequestFile, requestFilePath } from "../tasks/run-comparison.ts";
import type { TaskLimits, TaskMetadata } from "../tasks/task.ts";

/**
 * The largest bundle POST /v1/replays reads. The bundle is held in memory twice at most (the body, and views of it
 * as files): 32 MiB keeps that well inside a Worker isolate's 128 MB. A run's bundle is far smaller; a larger one is
 * mostly command output, which a replay does not need.
 */
export const MAX_BUNDLE_BYTES = 32 * 1024 * 1024;

/** The format versions of bundle.json this code reads (format 1 has no manifest, and is read too). */
const READABLE_FORMATS: readonly number[] = [BUNDLE_FORMAT_VERSION];

/** Where a bundle replay keeps the bundle it was made from, under its own run prefix (deleted with it). */
export function replayBundleKey(replayId: string): string {
  return `${runPrefix(replayId)}.replay/origin.tar`;
}

/** A run as its bundle recorded it. */
export interface BundleRecording {
  origin: ReplayOrigin;
  checkpoints: { checkpoint_id: string; position: string; message_count: number }[];
  /** Each checkpoint's conversation, by id. */
  conversations: ReadonlyMap<string, readonly MessageParam[]>;
  /** The recorded side of a comparison with a replay of it. */
  compared: ComparedRun;
}

const TaskFileSchema = z.object({
  id: z.uuid({ version: "v4" }),
  description: z.string(),
  status: z.string(),
  assigned_agent: z.string().min(1),
  result: z.string().nullable(),
});

const CheckpointsFileSchema = z.array(
  z.object({
    checkpoint_id: z.string().min(1),
    position: z.string(),
    state: z.object({
      messages: z.array(z.strictObject({ role: z.enum(["user", "assistant"]), content: MessageContentSchema })),
    }),
  }),
);

const ManifestSchema = z.object({ format: z.literal("outpost.run-bundle"), version: z.number().int() });

const EventLineSchema = z.object({
  event_type: z.string(),
  payload: z.record(z.string(), z.unknown()),
  redaction_mode: z.enum(["full", "redacted"]),
  /** Present on a sub-agent's event forwarded to its parent: not the task's own. */
  depth: z.number().optional(),
});

const TaskCreatedSchema = z.object({
  model: z.string().min(1),
  metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
});

const RunStartedSchema = z.object({
  max_turns: z.number().int().positive(),
  max_budget_usd: z.number().positive().nullable(),
  max_tokens: z.number().int().positive().nullable(),
});

function unusable(file: string, why: string): ApiError {
  return new ApiError("bundle_not_replayable", `The bundle's ${file} ${why}.`, file);
}

/** A file of the bundle as JSON checked by `schema`, or a 422 naming it. */
function jsonFile<T>(files: ReadonlyMap<string, Uint8Array>, path: string, schema: z.ZodType<T>): T {
  const bytes = files.get(path);
  if (!bytes) throw unusable(path, "is missing (a run bundle as GET /v1/tasks/:id/bundle downloads it has it)");
  let value: unknown;
  try {
    value = JSON.parse(new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes));
  } catch {
    throw unusable(path, "is not JSON");
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw unusable(path, `is not what Outpost writes (${issue?.path.join(".") || "(file)"}: ${issue?.message})`);
  }
  return parsed.data;
}

/**
 * The bundle's files by their path in the run directory. A download is the directory's files at the archive's
 * root; an archive someone made of the extracted folder (`tar -cf run.tar -C run .`, or of the folder itself) has
 * them under `./` or one folder, which is taken off.
 */
export function bundleFiles(archive: Uint8Array): Map<string, Uint8Array> {
  const raw = new Map<string, Uint8Array>();
  for (const [path, bytes] of tarFiles(archive)) raw.set(path.replace(/^(\.\/)+/, ""), bytes);
  if (raw.has("task.json")) return raw;
  const roots = [...raw.keys()]
    .filter((p) => /^[^/]+\/task\.json$/.test(p))
    .map((p) => p.slice(0, -"task.json".length));
  if (roots.length !== 1) return raw;
  const root = roots[0] as string;
  const files = new Map<string, Uint8Array>();
  for (const [path, bytes] of raw) if (path.startsWith(root)) files.set(path.slice(root.length), bytes);
  return files;
}

/** The run a bundle recorded (a 4xx ApiError when the archive is not one: invalid_bundle, bundle_not_replayable). */
export function readRecording(archive: Uint8Array): BundleRecording {
  const files = bundleFiles(archive);
  if (files.has(BUNDLE_MANIFEST)) {
    const manifest = jsonFile(files, BUNDLE_MANIFEST, ManifestSchema);
    if (!READABLE_FORMATS.includes(manifest.version)) {
      throw unusable(
        BUNDLE_MANIFEST,
        `names format version ${manifest.version}; this deployment reads versions 1 and ${READABLE_FORMATS.join(", ")}`,
      );
    }
  }
  const task = jsonFile(files, "task.json", TaskFileSchema);
  const saved = jsonFile(files, "checkpoints.json", CheckpointsFileSchema);
  const events = ownEvents(files);
  const created = events.find((e) => e.event_type === "task_created" || e.event_type === "session_created");
  if (!created) throw unusable("events.jsonl", "has no task_created event");
  if (created.event_type === "session_created") {
    throw new ApiError("replay_unavailable", `The bundle is a chat session's (${task.id}); replay runs one task.`);
  }
  const payload = TaskCreatedSchema.safeParse(created.payload);
  if (!payload.success) throw unusable("events.jsonl", "has a task_created event Outpost did not write");
  const started = events.find((e) => e.event_type === "run_started");
  const limits = started ? RunStartedSchema.safeParse(started.payload) : null;
  if (limits && !limits.success) throw unusable("events.jsonl", "has a run_started event Outpost did not write");
  const conversations = new Map<string, readonly MessageParam[]>();
  for (const checkpoint of saved)
    conversations.set(checkpoint.checkpoint_id, checkpoint.state.messages as MessageParam[]);
  const last = saved.at(-1);
  const messages = last ? (last.state.messages as MessageParam[]) : [];
  return {
    origin: {
      id: task.id,
      workflow: events.some((e) => e.event_type === "workflow_node_started") ? "(a workflow)" : null,
      assigned_agent: task.assigned_agent,
      model: payload.data.model,
      redaction_mode: created.redaction_mode,
      input: task.description,
      metadata: payload.data.metadata as TaskMetadata,
      // Tags are not in a bundle: the replay has none (they only choose its retention).
      tags: [],
      // The limits the run ran under (its own and its agent's, the smaller of each): the replay's own.
      limits: limits?.success ? runLimits(limits.data) : {},
    },
    checkpoints: saved.map((c) => ({
      checkpoint_id: c.checkpoint_id,
      position: c.position,
      message_count: c.state.messages.length,
    })),
    conversations,
    compared: { status: task.status, result: task.result, messages, requests: requestFiles(files, messages) },
  };
}

/** What planReplay reads, from the recording; `agent` looks an agent up in the request's tenant. */
export function bundleReplayRequest(
  recording: BundleRecording,
  agent: ReplayRequest["agent"],
  agentName: string | undefined,
): ReplayRequest {
  return {
    origin: recording.origin,
    checkpoints: recording.checkpoints,
    checkpoint: async (id) => {
      const messages = recording.conversations.get(id);
      return messages ? { state: { messages } } : null;
    },
    agent,
    // A tool call's recorded result is in the conversation (the tool_result blocks): a call without one was cut
    // short, and planReplay leaves it to a person, as for a replay of the task itself.
    ledger: async (toolUseIds) => {
      const wanted = new Set(toolUseIds);
      const settled: JsonObject = {};
      for (const message of recording.compared.messages) {
        if (message.role !== "user" || typeof message.content === "string") continue;
        for (const block of message.content) {
          if (block.type !== "tool_result" || !wanted.has(block.tool_use_id)) continue;
          settled[block.tool_use_id] = JSON.parse(
            JSON.stringify({ content: block.content ?? "", is_error: block.is_error === true }),
          );
        }
      }
      return { settled, in_flight: [], uncertain: {} };
    },
    // The recorded agent unless the request names another; either way, the `agent` query is what can change it.
    agentName: { name: agentName ?? recording.origin.assigned_agent, field: "agent" },
    source: "bundle",
  };
}

/** The events of the bundle's own task (not those its sub-agents forwarded), oldest first. */
function ownEvents(files: ReadonlyMap<string, Uint8Array>): z.infer<typeof EventLineSchema>[] {
  const bytes = files.get("events.jsonl");
  if (!bytes)
    throw unusable("events.jsonl", "is missing (a run bundle as GET /v1/tasks/:id/bundle downloads it has it)");
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
  } catch {
    throw unusable("events.jsonl", "is not UTF-8");
  }
  const events: z.infer<typeof EventLineSchema>[] = [];
  for (const [index, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      throw unusable("events.jsonl", `line ${index + 1} is not JSON`);
    }
    const parsed = EventLineSchema.safeParse(value);
    if (!parsed.success) throw unusable("events.jsonl", `line ${index + 1} is not an event record`);
    if (parsed.data.depth === undefined) events.push(parsed.data);
  }
  return events;
}

function runLimits(started: z.infer<typeof RunStartedSchema>): TaskLimits {
  return {
    max_turns: started.max_turns,
    ...(started.max_budget_usd !== null ? { max_budget_usd: started.max_budget_usd } : {}),
    ...(started.max_tokens !== null ? { max_tokens: started.max_tokens } : {}),
  };
}

/** Each model call's request file, as the comparison reads the task's own (null where missing or not JSON). */
function requestFiles(files: ReadonlyMap<string, Uint8Array>, messages: readonly MessageParam[]) {
  const calls = messages.filter((m) => m.role === "assistant").length;
  return Array.from({ length: calls }, (_, i) => {
    const bytes = files.get(requestFilePath(i + 1));
    return bytes ? parseRequestFile(new TextDecoder().decode(bytes)) : null;
  });
}
