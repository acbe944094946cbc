// A task's page: its header (agent, status, input, result or error, tokens, prompt-cache share and cost, cancel), a
// notice while it waits out its model provider (waiting.ts), the pending-input panel while it waits for a person, the live timeline of its events (and its sub-agents'), and its
// files. The timeline follows GET /v1/tasks/:id/events through the client's reader, which resumes with Last-Event-ID
// after a dropped connection; the header and the panel are re-read from GET /v1/tasks/:id whenever an event changes
// what they show.
import type { OutpostClient, OutpostError, OutpostEvent, Task } from "@outpost/client";
import {
  badge,
  cacheShare,
  collapsible,
  consolePath,
  describeError,
  errorLine,
  formatCost,
  formatTime,
  h,
  inputSplit,
  inputTokens,
  replace,
  totalInput,
} from "./dom.ts";
import { filesView } from "./files.ts";
import { pendingPanel, staleNotice } from "./pending.ts";
import { isAuthError } from "./session-key.ts";
import { Timeline } from "./timeline.ts";
import { waitingNotice } from "./waiting.ts";

const ENDED = new Set(["completed", "failed", "canceled"]);
/** The task's own events after which its header or its pending request may have changed. */
const CHANGES_TASK = new Set([
  "run_started",
  "run_resumed",
  "input_requested",
  "human_decision",
  "subagent_input_requested",
  "subagent_input_answered",
  "provider_wait_started",
  "provider_wait_ended",
  "run_finished",
  "run_failed",
  "run_canceled",
]);

export async function taskPage(
  main: HTMLElement,
  client: OutpostClient,
  id: string,
  onAuthLost: () => void,
): Promise<void> {
  document.title = `Task ${id} · Outpost`;
  // The event stream is opened at once, beside the task's own read: the replay of a long run starts a round trip earlier.
  const timeline = new Timeline({
    onFork: (taskId, checkpointId) => void fork(taskId ?? id, checkpointId),
    onRendered: () => hooks.onRendered(),
  });
  const stop = new AbortController();
  /** What a task event that changes the header, and a rendered batch, do: nothing until the page is built. */
  const hooks = { onTaskEvent: () => {}, onRendered: () => {} };
  main.dataset.stream = "open";
  const streamed = (async () => {
    for await (const event of client.tasks.events(id, { signal: stop.signal })) {
      timeline.push(event as OutpostEvent);
      if (event.depth === undefined && CHANGES_TASK.has(event.event_type)) hooks.onTaskEvent();
    }
  })();
  // Its failure is reported once the page is built (below); until then it must not count as unhandled.
  streamed.catch(() => undefined);
  let task: Task;
  try {
    task = await client.tasks.get(id);
  } catch (error) {
    stop.abort();
    await streamed.catch(() => undefined);
    if (isAuthError(error)) return onAuthLost();
    replace(main, h("section", { class: "card" }, h("h1", null, "Task"), errorLine(error)));
    return;
  }

  const head = h("section", { class: "card task-head", "aria-labelledby": "task-title" });
  const notice = h("div", { class: "notice", "aria-live": "assertive" });
  const pendingSlot = h("div");
  const waitingSlot = h("div");
  const files = h("div", { hidden: true });
  let filesLoaded = false;
  const timelineSection = h("section", { class: "timeline-wrap" }, timeline.root);
  const tab = (label: string, show: () => void, selected: boolean) => {
    const b = h("button", { type: "button", role: "tab", "aria-selected": selected ? "true" : "false" }, label);
    b.addEventListener("click", () => {
      for (const other of tabs.querySelectorAll("button")) other.setAttribute("aria-selected", "false");
      b.setAttribute("aria-selected", "true");
      show();
    });
    return b;
  };
  const tabs = h(
    "div",
    { class: "tabs", role: "tablist" },
    tab(
      "Timeline",
      () => {
        timelineSection.hidden = false;
        files.hidden = true;
      },
      true,
    ),
    tab(
      "Files",
      () => {
        timelineSection.hidden = true;
        files.hidden = false;
        if (!filesLoaded) {
          filesLoaded = true;
          files.appendChild(filesView(client, `/v1/tasks/${encodeURIComponent(id)}`));
        }
      },
      false,
    ),
  );
  const usageCell = h("dd", { id: "task-usage" });

  const renderHead = () => {
    main.dataset.status = task.status;
    const cancel = ENDED.has(task.status)
      ? null
      : h("button", { type: "button", class: "danger small" }, "Cancel task");
    cancel?.addEventListener("click", async () => {
      try {
        task = await client.tasks.cancel(id);
        renderHead();
      } catch (error) {
        replace(notice, errorLine(error));
      }
    });
    const parent = typeof task.parent_task_id === "string" ? task.parent_task_id : null;
    replace(
      head,
      h(
        "div",
        { class: "title-row" },
        h("h1", { id: "task-title" }, String(task.workflow ?? task.assigned_agent)),
        h("span", { id: "task-status" }, badge(task.status)),
        h("span", { class: "spacer" }),
        cancel,
      ),
      h(
        "dl",
        { class: "facts" },
        h("dt", null, "Task"),
        h("dd", { class: "mono" }, task.id),
        h("dt", null, "Created"),
        h("dd", null, formatTime(task.created_at)),
        parent ? h("dt", null, "From") : null,
        parent ? h("dd", null, h("a", { href: consolePath("tasks", parent), class: "mono" }, parent)) : null,
        h("dt", null, "Usage"),
        usageCell,
      ),
      h("h2", null, "Input"),
      collapsible(String(task.input ?? ""), "text"),
      task.result !== null && task.result !== undefined ? h("h2", null, "Result") : null,
      task.result !== null && task.result !== undefined ? collapsible(String(task.result), "text result") : null,
      task.error ? h("p", { class: "error" }, `${task.error.message} (${task.error.code})`) : null,
    );
    renderUsage();
    renderPending();
    replace(waitingSlot, waitingNotice(task.waiting_for));
  };

  const renderUsage = () => {
    const usage = (task.usage ?? {}) as Record<string, unknown>;
    const ended = ENDED.has(task.status);
    // While it runs, the sum of the model calls on the timeline; once it has ended, the task's own totals.
    const input = ended ? inputTokens(usage) : timeline.totals.input;
    const output = ended ? Number(usage.output_tokens ?? 0) : timeline.totals.outputTokens;
    const cost = ended ? usage.total_cost_usd : timeline.totals.costUsd;
    // "tokens in" is all the input; with the prompt cache, its share and, on a line below, the split.
    const cache = cacheShare(input);
    replace(
      usageCell,
      `${totalInput(input)} tokens in · ${output} out · `,
      cache,
      cache ? " · " : null,
      formatCost(cost),
      cache ? h("span", { class: "usage-split muted small" }, inputSplit(input)) : null,
    );
  };

  const renderPending = (stale: OutpostError | null = null) => {
    const pending = task.status === "input_required" ? task.pending_input : null;
    replace(
      pendingSlot,
      stale ? staleNotice(stale) : null,
      pending
        ? pendingPanel({
            client,
            resumePath: `/v1/tasks/${encodeURIComponent(id)}/resume`,
            pending,
            onDone: (error) => void refresh(error),
          })
        : null,
    );
  };

  let refreshing: Promise<void> | null = null;
  let again = false;
  const refresh = async (stale: OutpostError | null = null): Promise<void> => {
    if (refreshing) {
      again = true;
      return refreshing;
    }
    refreshing = (async () => {
      try {
        do {
          again = false;
          task = await client.tasks.get(id);
          renderHead();
        } while (again);
        if (stale) renderPending(stale);
      } catch (error) {
        replace(notice, errorLine(error));
      } finally {
        refreshing = null;
      }
    })();
    return refreshing;
  };

  const fork = async (taskId: string, checkpointId: string) => {
    try {
      const forked = await client.tasks.fork(taskId, { checkpoint_id: checkpointId });
      location.assign(consolePath("tasks", forked.id));
    } catch (error) {
      replace(notice, h("p", { class: "error", role: "alert" }, `Fork failed: ${describeError(error)}`));
    }
  };

  replace(
    main,
    h("p", { class: "crumbs" }, h("a", { href: "/console" }, "← Tasks")),
    head,
    notice,
    waitingSlot,
    pendingSlot,
    tabs,
    timelineSection,
    files,
  );
  renderHead();

  hooks.onTaskEvent = () => void refresh();
  hooks.onRendered = renderUsage;
  // What the task's header shows may have changed while it was read.
  void refresh();
  try {
    await streamed;
    main.dataset.stream = "ended";
  } catch (error) {
    main.dataset.stream = "failed";
    if (isAuthError(error)) return onAuthLost();
    replace(notice, h("p", { class: "error", role: "alert" }, `The event stream stopped: ${describeError(error)}`));
  }
  await refresh();
}
