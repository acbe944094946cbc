// The home page: start a task (an agent and its input), and the tenant's tasks, newest first, filtered by status,
// agent and tag (the filters live in the page's query string, so a filtered view can be bookmarked; the key never
// does), with their status kept live by re-reading the first page every few seconds while the tab is visible, and a
// label beside the status of a task that waits out its model provider (waiting.ts).
import type { OutpostClient, WaitingFor } from "@outpost/client";
import { badge, consolePath, describeError, errorLine, formatCost, formatTime, h, replace } from "./dom.ts";
import { waitingLabel } from "./waiting.ts";

/** How often the listing is re-read while the tab is visible (the directory follows a task within about a second). */
const REFRESH_MS = 3000;
const STATUSES = ["pending", "running", "input_required", "completed", "failed", "canceled"] as const;

interface Listed {
  id: string;
  agent: string;
  workflow: string | null;
  status: string;
  waiting_for: WaitingFor | null;
  tags: string[];
  created_at: string;
  total_cost_usd: number | null;
}

export async function taskListPage(main: HTMLElement, client: OutpostClient): Promise<void> {
  document.title = "Tasks · Outpost";
  const params = new URLSearchParams(location.search);
  const agents = await client.agents.list().then(
    (r) => r.agents.map((a) => String(a.name)),
    () => [] as string[],
  );

  // Start a task.
  const agentSelect = h(
    "select",
    { id: "new-agent", name: "agent", required: true },
    agents.map((name) => h("option", { value: name }, name)),
  );
  const input = h("textarea", {
    id: "new-input",
    name: "input",
    rows: 3,
    required: true,
    placeholder: "What should the agent do?",
  });
  const startStatus = h("div", { "aria-live": "polite" });
  const start = h(
    "form",
    { class: "card new-task", "aria-labelledby": "new-task-title" },
    h("h2", { id: "new-task-title" }, "Start a task"),
    h("div", { class: "row" }, h("label", { for: "new-agent" }, "Agent"), agentSelect),
    h("label", { for: "new-input" }, "Input"),
    input,
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Start")),
    startStatus,
  );
  start.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      const task = await client.tasks.create(agentSelect.value, { input: input.value });
      location.assign(consolePath("tasks", task.id));
    } catch (error) {
      replace(startStatus, errorLine(error));
    }
  });
  // Ctrl/Cmd+Enter starts it from the text box.
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && (event.ctrlKey || event.metaKey)) start.requestSubmit();
  });

  // Filters.
  const statusFilter = h(
    "select",
    { id: "filter-status", name: "status" },
    h("option", { value: "" }, "any status"),
    STATUSES.map((s) => h("option", { value: s, selected: params.get("status") === s }, s.replace(/_/g, " "))),
  );
  const agentFilter = h(
    "select",
    { id: "filter-agent", name: "agent" },
    h("option", { value: "" }, "any agent"),
    agents.map((name) => h("option", { value: name, selected: params.get("agent") === name }, name)),
  );
  const tagFilter = h("input", {
    id: "filter-tag",
    name: "tag",
    type: "search",
    placeholder: "tag",
    value: params.get("tag") ?? "",
  });
  const filters = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Filter tasks" },
    h("label", { for: "filter-status" }, "Status"),
    statusFilter,
    h("label", { for: "filter-agent" }, "Agent"),
    agentFilter,
    h("label", { for: "filter-tag" }, "Tag"),
    tagFilter,
  );

  const body = h("tbody");
  const table = h(
    "table",
    { class: "tasks" },
    h(
      "thead",
      null,
      h(
        "tr",
        null,
        ["Task", "Agent", "Status", "Tags", "Created", "Cost"].map((t) => h("th", { scope: "col" }, t)),
      ),
    ),
    body,
  );
  const more = h("button", { type: "button", hidden: true }, "Load more");
  const listStatus = h("div", { "aria-live": "polite" });

  let rows: Listed[] = [];
  let cursor: string | null = null;
  const query = () => {
    const q: Record<string, string> = {};
    if (statusFilter.value) q.status = statusFilter.value;
    if (agentFilter.value) q.agent = agentFilter.value;
    if (tagFilter.value.trim()) q.tag = tagFilter.value.trim();
    return q;
  };
  const render = () => {
    replace(
      body,
      rows.length === 0
        ? h("tr", null, h("td", { colspan: 6, class: "muted" }, "No tasks yet."))
        : rows.map((t) =>
            h(
              "tr",
              { "data-task-id": t.id },
              h("td", null, h("a", { href: consolePath("tasks", t.id), class: "mono" }, t.id)),
              h("td", null, t.workflow ?? t.agent),
              h("td", null, badge(t.status), waitingLabel(t.waiting_for)),
              h("td", null, t.tags.join(", ")),
              h("td", null, formatTime(t.created_at)),
              h("td", null, formatCost(t.total_cost_usd)),
            ),
          ),
    );
    more.hidden = cursor === null;
  };
  /** Reads the first page again (a refresh or new filters) and keeps any further pages loaded after it. */
  const loadFirst = async () => {
    try {
      const page = await client.tasks.list({ ...query(), limit: 50 });
      const first = page.tasks as unknown as Listed[];
      const seen = new Set(first.map((t) => t.id));
      const rest = rows.length > first.length ? rows.slice(first.length).filter((t) => !seen.has(t.id)) : [];
      rows = [...first, ...rest];
      if (rest.length === 0) cursor = page.next_cursor;
      replace(listStatus);
      render();
    } catch (error) {
      replace(listStatus, h("p", { class: "error", role: "alert" }, describeError(error)));
    }
  };
  more.addEventListener("click", async () => {
    if (cursor === null) return;
    try {
      const page = await client.tasks.list({ ...query(), limit: 50, cursor });
      rows = [...rows, ...(page.tasks as unknown as Listed[])];
      cursor = page.next_cursor;
      render();
    } catch (error) {
      replace(listStatus, errorLine(error));
    }
  });
  const applyFilters = () => {
    const q = new URLSearchParams(query());
    history.replaceState(null, "", q.size ? `?${q}` : location.pathname);
    rows = [];
    cursor = null;
    void loadFirst();
  };
  filters.addEventListener("change", applyFilters);
  filters.addEventListener("submit", (event) => {
    event.preventDefault();
    applyFilters();
  });

  replace(
    main,
    start,
    h(
      "section",
      { class: "card", "aria-labelledby": "tasks-title" },
      h("h2", { id: "tasks-title" }, "Tasks"),
      filters,
      listStatus,
      h("div", { class: "table-wrap" }, table),
      more,
    ),
  );
  await loadFirst();
  setInterval(() => {
    if (!document.hidden) void loadFirst();
  }, REFRESH_MS);
}
