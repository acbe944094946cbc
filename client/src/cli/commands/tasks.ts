// `outpost tasks`: the tenant's tasks, newest first (GET /v1/tasks), with the listing's filters and paging.
import type { Query } from "../../index.ts";
import type { Context } from "../context.ts";
import { EXIT, type ExitCode } from "../exit-codes.ts";
import { formatCost, formatStatus, table } from "../output.ts";

export interface TasksOptions {
  status?: string;
  agent?: string;
  workflow?: string;
  tag?: string;
  parent?: string;
  limit?: string;
  cursor?: string;
  createdAfter?: string;
  createdBefore?: string;
}

export async function tasksCommand(ctx: Context, options: TasksOptions): Promise<ExitCode> {
  const { client, out } = ctx;
  const query: Query = {
    status: options.status,
    agent: options.agent,
    workflow: options.workflow,
    tag: options.tag,
    parent_task_id: options.parent,
    limit: options.limit,
    cursor: options.cursor,
    created_after: options.createdAfter,
    created_before: options.createdBefore,
  };
  const page = await client.tasks.list(query);
  if (out.json) {
    out.jsonLine(page);
    return EXIT.ok;
  }
  if (page.tasks.length === 0) out.note("No tasks.");
  else {
    const rows = page.tasks.map((t) => [
      t.id,
      t.agent,
      formatStatus(t.status, t.waiting_for),
      t.created_at.replace("T", " ").slice(0, 19),
      formatCost(t.total_cost_usd),
    ]);
    const [head, ...body] = table([["ID", "AGENT", "STATUS", "CREATED (UTC)", "COST"], ...rows]);
    out.line(out.style("bold", head ?? ""));
    for (const line of body) out.line(line);
  }
  if (page.next_cursor) out.note(out.styleErr("dim", `more: outpost tasks --cursor ${page.next_cursor}`));
  return EXIT.ok;
}
