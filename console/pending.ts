// The pending-input panel: what a waiting task (or session turn) asks a person, with approve, reject and modify for a
// tool call, or answer and decline for a question. Every answer names the request it was shown (request_id), so an
// answer to a request that is no longer current is refused by Outpost (409 pending_input_changed, already_decided or
// task_not_waiting) and the page says so and shows what waits now, instead of answering something else.
import { type OutpostClient, OutpostError, type PendingInput } from "@outpost/client";
import { describeError, h, pretty, replace } from "./dom.ts";

export interface PendingPanelOptions {
  client: OutpostClient;
  /** POST /v1/tasks/:id/resume or /v1/sessions/:id/resume. */
  resumePath: string;
  pending: PendingInput;
  /** After an answer was taken, or refused as stale (then with the error): the page reloads what waits. */
  onDone: (stale: OutpostError | null) => void;
}

export function pendingPanel(options: PendingPanelOptions): HTMLElement {
  const { pending } = options;
  const p = pending as Record<string, unknown>;
  const question = pending.kind === "question";
  const status = h("div", { class: "panel-status", "aria-live": "polite" });
  const message = h("textarea", {
    id: "pending-message",
    rows: 2,
    placeholder: question
      ? "Your answer"
      : "Optional: a note for the agent (sent with a rejection, or with the result)",
  });
  const toolInput = h("textarea", { id: "pending-tool-input", rows: 6, class: "mono", spellcheck: "false" });
  toolInput.value = pretty(p.input ?? {});
  const modifyBox = h(
    "div",
    { class: "modify", hidden: true },
    h("label", { for: "pending-tool-input" }, "Tool input (JSON)"),
    toolInput,
  );
  const buttons: HTMLButtonElement[] = [];

  const send = async (action: "approve" | "reject" | "modify") => {
    const body: Record<string, unknown> = { request_id: pending.request_id, action };
    const text = message.value.trim();
    if (action === "approve" && question && !text) {
      replace(status, h("p", { class: "error", role: "alert" }, "Write an answer first."));
      message.focus();
      return;
    }
    if (text) {
      if (action === "modify") body.state_updates = { messages: [{ role: "user", content: text }] };
      else body.message = text;
    }
    if (action === "modify") {
      try {
        body.tool_input = JSON.parse(toolInput.value);
      } catch {
        replace(status, h("p", { class: "error", role: "alert" }, "The tool input is not valid JSON."));
        toolInput.focus();
        return;
      }
    }
    for (const button of buttons) button.disabled = true;
    replace(status, h("p", { class: "muted" }, "Sending…"));
    try {
      await options.client.request("POST", options.resumePath, { body });
      options.onDone(null);
    } catch (error) {
      for (const button of buttons) button.disabled = false;
      if (error instanceof OutpostError && error.status === 409) {
        options.onDone(error);
        return;
      }
      replace(status, h("p", { class: "error", role: "alert" }, describeError(error)));
    }
  };

  const button = (label: string, className: string, onClick: () => void) => {
    const b = h("button", { type: "button", class: className }, label);
    b.addEventListener("click", onClick);
    buttons.push(b);
    return b;
  };

  const actions = question
    ? [button("Answer", "primary", () => send("approve")), button("Decline", "danger", () => send("reject"))]
    : [
        button("Approve", "primary", () => send("approve")),
        button("Reject", "danger", () => send("reject")),
        button("Modify…", "", () => {
          if (modifyBox.hidden) {
            modifyBox.hidden = false;
            toolInput.focus();
          } else void send("modify");
        }),
      ];

  return h(
    "section",
    {
      class: "card pending",
      "aria-labelledby": "pending-title",
      "data-request-id": pending.request_id,
    },
    h("h2", { id: "pending-title" }, question ? "The agent asks you" : "Approval needed"),
    typeof p.task_id === "string" ? h("p", { class: "muted small" }, `Asked by sub-agent task ${p.task_id}`) : null,
    question
      ? h("p", { class: "question" }, String(p.question ?? ""))
      : h("p", null, "The agent wants to run ", h("strong", null, String(p.tool_name ?? "")), " with:"),
    question ? null : h("pre", { class: "block input" }, pretty(p.input ?? {})),
    typeof p.reason === "string" ? h("p", { class: "muted small" }, p.reason) : null,
    typeof p.expires_at === "string"
      ? h("p", { class: "muted small" }, `Decided automatically at ${p.expires_at}`)
      : null,
    h("label", { for: "pending-message" }, question ? "Answer" : "Message"),
    message,
    modifyBox,
    h("div", { class: "actions" }, actions),
    h("p", { class: "muted small" }, `Request ${pending.request_id}`),
    status,
  );
}

/** What the page shows when its answer came too late: Outpost's own message and code. */
export function staleNotice(error: OutpostError): HTMLElement {
  return h(
    "p",
    { class: "error", role: "alert", "data-code": error.code },
    `Your answer was not applied: ${error.message} (${error.code}). What waits now is shown below.`,
  );
}
