// `outpost run`, `watch`, `fork` and `cancel`: start a task (POST /v1/agents/:name/tasks, or a fork from a
// checkpoint) and follow it live to its end (follow.ts), unless --detach; `run` creates and follows in one request,
// the POST answering with the task's events; `watch` follows one that already runs; `cancel` stops one.
import { readFile } from "node:fs/promises";
import { isAbsolute, relative, resolve, sep } from "node:path";
import type { Schemas, Task } from "../../index.ts";
import type { Context } from "../context.ts";
import { CliError, EXIT, type ExitCode } from "../exit-codes.ts";
import { followTask, startsWait } from "../follow.ts";

export async function runCommand(
  ctx: Context,
  agent: string,
  input: string,
  options: { file: string[]; tag: string[]; wait: boolean },
): Promise<ExitCode> {
  const files = await readWorkspaceFiles(options.file);
  const body: Schemas["CreateTaskBody"] = { input };
  if (Object.keys(files).length > 0) body.files = files;
  if (options.tag.length > 0) body.tags = options.tag;
  if (!options.wait) return started(ctx, await ctx.client.tasks.create(agent, body), false);
  // Created and followed in one request: the POST answers with the task's event stream (tasks.run).
  const { id, events } = await ctx.client.tasks.run(agent, body, { until: startsWait });
  if (!ctx.out.json) ctx.out.note(ctx.out.styleErr("dim", `${agent} · task ${id}`));
  return followTask(ctx, id, { stream: events });
}

export async function watchCommand(ctx: Context, id: string, options: { depth?: number }): Promise<ExitCode> {
  return followTask(ctx, id, options.depth !== undefined ? { depth: options.depth } : {});
}

export async function cancelCommand(ctx: Context, id: string): Promise<ExitCode> {
  const task = await ctx.client.tasks.cancel(id);
  if (ctx.out.json) ctx.out.jsonLine(task);
  else ctx.out.line(`${task.status} ${task.id}`);
  return EXIT.ok;
}

export async function forkCommand(
  ctx: Context,
  id: string,
  options: { checkpoint?: string; message?: string; wait: boolean },
): Promise<ExitCode> {
  const checkpoint = options.checkpoint ?? (await latestCheckpoint(ctx, id));
  const body: Schemas["ForkBody"] = { checkpoint_id: checkpoint };
  if (options.message !== undefined) {
    body.state_updates = { messages: [{ role: "user", content: options.message }] };
  }
  const task = await ctx.client.tasks.fork(id, body);
  if (!ctx.out.json) ctx.out.note(ctx.out.styleErr("dim", `forked from ${id} at ${checkpoint}`));
  return started(ctx, task, options.wait);
}

/** What `outpost replay` replays: an ended task, or a run bundle file (with another agent, if named). */
export type ReplaySource = { task: string } | { bundle: string; agent?: string };

/**
 * `outpost replay <task>`, or `outpost replay --bundle <file.tar>`: the agent, as it is now, answered by the recorded
 * responses and results of the task or of its downloaded bundle (docs/evaluations.md#replaying-a-run), followed live;
 * then what it did differently. Exit 1 when the replay failed.
 */
export async function replayCommand(ctx: Context, source: ReplaySource, options: { wait: boolean }): Promise<ExitCode> {
  const { out } = ctx;
  let task: Task;
  if ("task" in source) {
    task = await ctx.client.tasks.replay(source.task);
    if (!out.json) out.note(out.styleErr("dim", `replaying ${source.task}`));
  } else {
    const bundle = await readBundle(source.bundle);
    task = await ctx.client.tasks.replayBundle(bundle, source.agent !== undefined ? { agent: source.agent } : {});
    const recorded = task.trigger && "task_id" in task.trigger ? task.trigger.task_id : "";
    if (!out.json) out.note(out.styleErr("dim", `replaying ${recorded} from ${source.bundle}`));
  }
  if (!options.wait) return started(ctx, task, false);
  const code = await started(ctx, task, true);
  const comparison = await ctx.client.tasks.compareReplay(task.id);
  const of = comparison.replay_of;
  if (out.json) out.jsonLine(comparison);
  else if (comparison.identical) out.note(out.styleErr("green", `✓ nothing differs from ${of}`));
  else {
    out.note(out.styleErr("yellow", `${comparison.differences.length} difference(s) from ${of}:`));
    for (const d of comparison.differences) {
      const where = d.turn === null ? d.what : `${d.what}, turn ${d.turn}`;
      out.note(`  ${where}: ${JSON.stringify(d.original)} → ${JSON.stringify(d.replay)}`);
    }
  }
  return code;
}

/** A bundle file's bytes; an unreadable one is a usage error naming it. */
async function readBundle(path: string): Promise<Uint8Array> {
  try {
    return new Uint8Array(await readFile(path));
  } catch (error) {
    const why = error instanceof Error && "code" in error ? String(error.code) : "unreadable";
    throw new CliError("unreadable_bundle", `Cannot read the bundle ${path} (${why}).`, EXIT.usage, "bundle");
  }
}

/** A task just created: followed live, or with --detach shown with the way to follow it. */
async function started(ctx: Context, task: Task, wait: boolean): Promise<ExitCode> {
  const { out } = ctx;
  if (wait) {
    if (!out.json) out.note(out.styleErr("dim", `${task.assigned_agent} · task ${task.id}`));
    return followTask(ctx, task.id);
  }
  if (out.json) out.jsonLine(task);
  else {
    out.line(task.id);
    out.note(out.styleErr("dim", `${task.assigned_agent} · ${task.status} · follow it: outpost watch ${task.id}`));
  }
  return EXIT.ok;
}

async function latestCheckpoint(ctx: Context, id: string): Promise<string> {
  const { checkpoints } = await ctx.client.request<{ checkpoints: { checkpoint_id: string }[] }>(
    "GET",
    `/v1/tasks/${encodeURIComponent(id)}/checkpoints`,
  );
  const last = checkpoints.at(-1);
  if (!last) throw new CliError("no_checkpoint", `Task ${id} has no checkpoint to fork from yet.`, EXIT.api);
  return last.checkpoint_id;
}

/**
 * --file paths as the task's workspace files ({path: text}): a file under the current directory keeps its relative
 * path, any other its name. Only text files: the API takes files as text.
 */
export async function readWorkspaceFiles(paths: readonly string[]): Promise<Record<string, string>> {
  const files: Record<string, string> = {};
  for (const path of paths) {
    let bytes: Uint8Array;
    try {
      bytes = await readFile(path);
    } catch (error) {
      const reason = (error as NodeJS.ErrnoException).code ?? "unreadable";
      throw new CliError("file_unreadable", `Cannot read ${path} (${reason}).`, EXIT.usage, "file");
    }
    let text: string;
    try {
      text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes);
    } catch {
      throw new CliError(
        "file_not_text",
        `${path} is not UTF-8 text; only text files can be sent.`,
        EXIT.usage,
        "file",
      );
    }
    const full = resolve(path);
    const rel = relative(process.cwd(), full);
    const name = rel === "" || rel.startsWith("..") || isAbsolute(rel) ? (full.split(sep).at(-1) ?? path) : rel;
    files[name.split(sep).join("/")] = text;
  }
  return files;
}
