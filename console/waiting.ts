// What a running task (or a session's turn) waits for other than a person: its model provider, while a model call
// waits out an outage or a rate limit on a timer (`waiting_for`, docs/provider-waits.md). The task and session pages
// show a notice with the time of the next try in the reader's own time zone; the task list, a label beside the status.
import type { WaitingFor } from "@outpost/client";
import { h } from "./dom.ts";

/** The time of day of an ISO instant in the reader's time zone (the wait is minutes long, rarely past midnight). */
export function clockTime(iso: unknown): string {
  if (typeof iso !== "string") return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleTimeString();
}

/** The notice on a task's or session's page; null when it waits for nothing. */
export function waitingNotice(waiting: WaitingFor | null | undefined): HTMLElement | null {
  if (!waiting) return null;
  const tries = `${waiting.attempts} ${waiting.attempts === 1 ? "try" : "tries"} so far`;
  const error = waiting.last_error;
  return h(
    "p",
    { class: "card waiting", role: "status", "data-waiting": waiting.kind },
    h("strong", null, `Waiting for the model provider until ${clockTime(waiting.until)}`),
    ` — ${tries}; last error: ${error.message} (${error.code})`,
  );
}

/** The label beside a listed task's status badge; null when it waits for nothing. */
export function waitingLabel(waiting: WaitingFor | null | undefined): HTMLElement | null {
  if (!waiting) return null;
  const title = `Until ${clockTime(waiting.until)}: ${waiting.last_error.message} (${waiting.last_error.code})`;
  return h("span", { class: "waiting-label small", title }, "waiting for provider");
}
