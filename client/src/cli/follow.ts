// Following a task to its end, as `run`, `watch` and `fork` do: its event stream (sub-agents' events
// included) rendered live, or printed as JSON lines; when the task waits for a person, the request is asked inline on
// a terminal and answered, then the stream is followed on from where it was; without a terminal (or with --json) the
// way to answer is printed and the command ends with EXIT.waiting. The result: the task as it ended.
import type { OutpostEvent, Task } from "../index.ts";
import type { Context } from "./context.ts";
import { EXIT, type ExitCode } from "./exit-codes.ts";
import { answerOrLeave } from "./pending-input.ts";
import { RunRenderer, type UsageFigures } from "./run-renderer.ts";
import { createSpinner } from "./spinner.ts";

/** Whether the stream's own task (or session) now waits for a person (its own request, or a sub-agent's shown on it). */
export function startsWait(event: OutpostEvent): boolean {
  return (
    event.depth === undefined &&
    (event.event_type === "input_requested" || event.event_type === "subagent_input_requested")
  );
}

export async function followTask(
  ctx: Context,
  taskId: string,
  options: {
    after?: number;
    depth?: number;
    ask?: boolean;
    /** The task's events already opened (the stream its creating POST answered with), read before any other. */
    stream?: AsyncIterable<OutpostEvent>;
  } = {},
): Promise<ExitCode> {
  const { client, out } = ctx;
  const renderer = new RunRenderer(out, createSpinner(out.live));
  let after = options.after ?? 0;
  // Ctrl-C stops following, not the task: say how to pick it up again (before main.ts exits 130).
  const onInterrupt = () => {
    renderer.stop();
    out.note(`\nStopped following; task ${taskId} goes on: outpost watch ${taskId} (or outpost cancel ${taskId})`);
  };
  process.prependOnceListener("SIGINT", onInterrupt);
  try {
    let tree: { total?: UsageFigures; subagents?: unknown[] } | undefined;
    if (!out.json) renderer.begin("starting");
    let opened = options.stream;
    for (;;) {
      let waits = false;
      const stream =
        opened ??
        client.tasks.events(taskId, {
          after,
          ...(options.depth !== undefined ? { depth: options.depth } : {}),
          until: startsWait,
        });
      opened = undefined;
      for await (const event of stream) {
        after = event.seq;
        if (out.json) out.jsonLine(event);
        else renderer.event(event);
        waits = startsWait(event);
        if (event.depth === undefined && event.payload.usage_rollup) tree = event.payload.usage_rollup as typeof tree;
      }
      if (!waits) break;
      // A request was made: it may still wait, or (replaying an old one) have been answered since.
      const task = await client.tasks.get(taskId);
      if (task.status !== "input_required" || !task.pending_input) continue;
      renderer.stop();
      await answerOrLeave(ctx, { kind: "task", id: taskId }, task.pending_input, task, options);
    }
    const task = await client.tasks.get(taskId);
    if (out.json) out.jsonLine(task);
    else {
      // A task that delegated: the whole tree's usage (its own is the task view's).
      const subagents = tree?.subagents?.length ?? 0;
      const extra = subagents > 0 ? [`${subagents} sub-agent${subagents === 1 ? "" : "s"}`] : [];
      renderer.summary(task.status, tree?.total ?? usageOf(task), [...extra, `task ${task.id}`]);
    }
    return task.status === "completed" ? EXIT.ok : EXIT.taskFailed;
  } finally {
    process.removeListener("SIGINT", onInterrupt);
    renderer.stop();
  }
}

/** A task view's usage (its own model calls) for the summary line. */
export function usageOf(task: Pick<Task, "usage">): UsageFigures | undefined {
  const usage = task.usage as UsageFigures | null | undefined;
  return usage ?? undefined;
}
