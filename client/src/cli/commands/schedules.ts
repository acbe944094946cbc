// `outpost schedules`: the tenant's scheduled runs (docs/schedules.md): listed, created on a cron expression or at an
// instant, paused, resumed and deleted, through the client's schedules methods.
import type { Schedule } from "../../index.ts";
import type { Context } from "../context.ts";
import { CliError, EXIT, type ExitCode } from "../exit-codes.ts";
import { table } from "../output.ts";

export interface CreateScheduleOptions {
  cron?: string;
  timezone?: string;
  at?: string;
  missed?: "run_once" | "skip";
  tag?: string[];
}

/** A schedule's timing in a few words: its cron expression and zone, or its instant. */
function when(schedule: { cron: string | null; timezone: string | null; at: string | null }): string {
  if (schedule.cron !== null) return `${schedule.cron} (${schedule.timezone ?? "UTC"})`;
  return schedule.at ?? "";
}

function time(value: string | null): string {
  return value === null ? "—" : value.replace("T", " ").slice(0, 19);
}

export async function listSchedulesCommand(ctx: Context, options: { cursor?: string }): Promise<ExitCode> {
  const { client, out } = ctx;
  const page = await client.schedules.list(options.cursor ? { cursor: options.cursor } : {});
  if (out.json) {
    out.jsonLine(page);
    return EXIT.ok;
  }
  if (page.schedules.length === 0) out.note("No schedules.");
  else {
    const rows = page.schedules.map((s) => [s.id, s.agent, s.status, when(s), time(s.next_run_at)]);
    const [head, ...body] = table([["ID", "AGENT", "STATUS", "WHEN", "NEXT RUN (UTC)"], ...rows]);
    out.line(out.style("bold", head ?? ""));
    for (const line of body) out.line(line);
  }
  if (page.next_cursor) out.note(out.styleErr("dim", `more: outpost schedules --cursor ${page.next_cursor}`));
  return EXIT.ok;
}

export async function createScheduleCommand(
  ctx: Context,
  agent: string,
  input: string,
  options: CreateScheduleOptions,
): Promise<ExitCode> {
  if ((options.cron === undefined) === (options.at === undefined)) {
    throw new CliError("usage", "Give --cron (with --timezone if not UTC) or --at, not both.", EXIT.usage);
  }
  const schedule = await ctx.client.schedules.create({
    agent,
    input,
    ...(options.cron !== undefined ? { cron: options.cron } : {}),
    ...(options.timezone !== undefined ? { timezone: options.timezone } : {}),
    ...(options.at !== undefined ? { at: options.at } : {}),
    ...(options.missed !== undefined ? { missed: options.missed } : {}),
    ...(options.tag && options.tag.length > 0 ? { tags: options.tag } : {}),
  });
  return printSchedule(ctx, schedule, "scheduled");
}

export async function changeScheduleCommand(
  ctx: Context,
  verb: "pause" | "resume" | "delete",
  id: string,
): Promise<ExitCode> {
  const { client, out } = ctx;
  if (verb === "delete") {
    await client.schedules.delete(id);
    if (out.json) out.jsonLine({ id, deleted: true });
    else out.line(`${out.style("green", "✓")} deleted ${id}`);
    return EXIT.ok;
  }
  const schedule = verb === "pause" ? await client.schedules.pause(id) : await client.schedules.resume(id);
  return printSchedule(ctx, schedule, verb === "pause" ? "paused" : "resumed");
}

function printSchedule(ctx: Context, schedule: Schedule, done: string): ExitCode {
  const { out } = ctx;
  if (out.json) out.jsonLine(schedule);
  else {
    out.line(`${out.style("green", "✓")} ${done} ${schedule.id}: ${schedule.agent}, ${when(schedule)}`);
    out.note(out.styleErr("dim", `next run: ${time(schedule.next_run_at)} UTC · status ${schedule.status}`));
  }
  return EXIT.ok;
}
