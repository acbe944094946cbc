// Chat: the tenant's sessions with a button to start one with an agent, and a session's page, a conversation with
// its timeline (GET /v1/sessions/:id/events, every turn's events in one resumable stream), a message box (Enter sends,
// Shift+Enter starts a new line), a notice while a turn waits out its model provider (waiting.ts), the pending-input
// panel while a turn waits for a person, and the session's files.
import type { OutpostClient, OutpostError, PendingInput, WaitingFor } from "@outpost/client";
import { badge, consolePath, describeError, errorLine, formatCost, formatTime, h, replace } from "./dom.ts";
import { filesView } from "./files.ts";
import { pendingPanel, staleNotice } from "./pending.ts";
import { isAuthError } from "./session-key.ts";
import { Timeline } from "./timeline.ts";
import { waitingLabel, waitingNotice } from "./waiting.ts";

interface SessionView {
  id: string;
  agent?: string;
  assigned_agent?: string;
  status: string;
  created_at?: string;
  pending_input?: PendingInput | null;
  waiting_for?: WaitingFor | null;
  usage?: Record<string, unknown>;
  [member: string]: unknown;
}

/** Session events after which its status or its pending request may have changed. */
const CHANGES_SESSION = new Set([
  "turn_queued",
  "turn_started",
  "turn_finished",
  "input_requested",
  "human_decision",
  "subagent_input_requested",
  "subagent_input_answered",
  "provider_wait_started",
  "provider_wait_ended",
  "session_closed",
]);

export async function sessionListPage(main: HTMLElement, client: OutpostClient): Promise<void> {
  document.title = "Chat · Outpost";
  const agents = await client.agents.list().then(
    (r) => r.agents.filter((a) => a.kind !== "skills").map((a) => String(a.name)),
    () => [] as string[],
  );
  const agentSelect = h(
    "select",
    { id: "chat-agent", required: true },
    agents.map((n) => h("option", { value: n }, n)),
  );
  const status = h("div", { "aria-live": "polite" });
  const form = h(
    "form",
    { class: "card", "aria-labelledby": "new-chat-title" },
    h("h2", { id: "new-chat-title" }, "New chat"),
    h("div", { class: "row" }, h("label", { for: "chat-agent" }, "Agent"), agentSelect),
    h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Start chatting")),
    status,
  );
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    try {
      // enqueue: a message sent while a turn runs waits its turn instead of being refused.
      const session = await client.sessions.create(agentSelect.value, { busy: "enqueue" });
      location.assign(consolePath("sessions", session.id));
    } catch (error) {
      replace(status, errorLine(error));
    }
  });
  const list = h("div", null, h("p", { class: "muted" }, "Loading…"));
  replace(
    main,
    form,
    h(
      "section",
      { class: "card", "aria-labelledby": "sessions-title" },
      h("h2", { id: "sessions-title" }, "Sessions"),
      list,
    ),
  );
  try {
    const page = await client.request<{ sessions: SessionView[] }>("GET", "/v1/sessions", { query: { limit: 50 } });
    replace(
      list,
      page.sessions.length === 0
        ? h("p", { class: "muted" }, "No sessions yet.")
        : h(
            "ul",
            { class: "sessions" },
            page.sessions.map((s) =>
              h(
                "li",
                null,
                h("a", { href: consolePath("sessions", s.id), class: "mono" }, s.id),
                " ",
                String(s.agent ?? ""),
                " ",
                badge(s.status),
                waitingLabel(s.waiting_for),
                h("span", { class: "muted small" }, ` ${formatTime(s.created_at)}`),
              ),
            ),
          ),
    );
  } catch (error) {
    replace(list, errorLine(error));
  }
}

export async function sessionPage(
  main: HTMLElement,
  client: OutpostClient,
  id: string,
  onAuthLost: () => void,
): Promise<void> {
  document.title = `Chat ${id} · Outpost`;
  const path = `/v1/sessions/${encodeURIComponent(id)}`;
  let session: SessionView;
  try {
    session = await client.request<SessionView>("GET", path);
  } catch (error) {
    if (isAuthError(error)) return onAuthLost();
    replace(main, h("section", { class: "card" }, h("h1", null, "Chat"), errorLine(error)));
    return;
  }
  const head = h("div", { class: "title-row" });
  const notice = h("div", { class: "notice", "aria-live": "assertive" });
  const pendingSlot = h("div");
  const timeline = new Timeline({ chat: true });
  const message = h("textarea", {
    id: "chat-message",
    rows: 2,
    placeholder: "Message (Enter sends, Shift+Enter: new line)",
  });
  const composer = h(
    "form",
    { class: "composer", "aria-label": "Send a message" },
    h("label", { for: "chat-message", class: "visually-hidden" }, "Message"),
    message,
    h("button", { type: "submit", class: "primary" }, "Send"),
  );
  const files = h("details", { class: "card" }, h("summary", null, "Files"));
  files.addEventListener("toggle", () => {
    if (files.open && files.childElementCount === 1) files.appendChild(filesView(client, path));
  });

  const render = (stale: OutpostError | null = null) => {
    main.dataset.status = session.status;
    const close =
      session.status === "closed" ? null : h("button", { type: "button", class: "small danger" }, "Close session");
    close?.addEventListener("click", async () => {
      try {
        await client.sessions.close(id);
        await refresh();
      } catch (error) {
        replace(notice, errorLine(error));
      }
    });
    const usage = session.usage ?? {};
    replace(
      head,
      h("h1", null, `Chat with ${String(session.agent ?? session.assigned_agent ?? "")}`),
      badge(session.status),
      h("span", { class: "muted small" }, ` ${formatCost(usage.total_cost_usd)}`),
      h("span", { class: "spacer" }),
      close,
    );
    const pending = session.status === "input_required" ? (session.pending_input ?? null) : null;
    replace(
      pendingSlot,
      stale ? staleNotice(stale) : null,
      waitingNotice(session.waiting_for),
      pending ? pendingPanel({ client, resumePath: `${path}/resume`, pending, onDone: (e) => void refresh(e) }) : null,
    );
    message.disabled = session.status === "closed";
  };
  const refresh = async (stale: OutpostError | null = null) => {
    try {
      session = await client.request<SessionView>("GET", path);
      render(stale);
    } catch (error) {
      replace(notice, errorLine(error));
    }
  };

  composer.addEventListener("submit", async (event) => {
    event.preventDefault();
    const text = message.value.trim();
    if (!text) return;
    message.value = "";
    try {
      // wait 0: the answer streams into the timeline; this only queues the message.
      await client.sessions.send(id, { message: text }, { wait: 0 });
      replace(notice);
    } catch (error) {
      message.value = text;
      replace(notice, errorLine(error));
    }
  });
  message.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      composer.requestSubmit();
    }
  });

  replace(
    main,
    h("p", { class: "crumbs" }, h("a", { href: "/console/sessions" }, "← Chat")),
    h("section", { class: "card chat-head" }, head, h("p", { class: "muted small mono" }, id)),
    notice,
    h("section", { class: "timeline-wrap" }, timeline.root),
    pendingSlot,
    composer,
    files,
  );
  render();
  message.focus();
  try {
    for await (const event of client.sessions.events(id)) {
      timeline.push(event);
      if (event.depth === undefined && CHANGES_SESSION.has(event.event_type)) void refresh();
    }
  } catch (error) {
    if (isAuthError(error)) return onAuthLost();
    replace(notice, h("p", { class: "error", role: "alert" }, `The event stream stopped: ${describeError(error)}`));
  }
  await refresh();
}
