// `outpost chat <agent>`: a conversation in a session (docs/sessions.md), like seed 004's `holodeck chat`. Each
// message is a turn (POST /v1/sessions/:id/messages), whose events are streamed as they happen (the turn's event
// stream, resumed with Last-Event-ID) and rendered as a run's are; a turn that waits for a person is asked inline.
// On a terminal the messages are typed at a prompt (@clack/prompts); otherwise each line of stdin is one message.
// Leaving (/exit, Ctrl-C, the end of stdin) closes the session and shows what it cost.
import { createInterface } from "node:readline";
import { isCancel, text } from "@clack/prompts";
import type { OutpostEvent, PendingInput } from "../../index.ts";
import type { Context } from "../context.ts";
import { EXIT, type ExitCode } from "../exit-codes.ts";
import { startsWait } from "../follow.ts";
import { type CacheFigures, formatCacheShare, formatCost } from "../output.ts";
import { answerOrLeave } from "../pending-input.ts";
import { RunRenderer } from "../run-renderer.ts";
import { createSpinner } from "../spinner.ts";

interface SessionView {
  id: string;
  status: string;
  pending_input?: PendingInput | null;
  usage?: CacheFigures & { total_cost_usd?: number | null; total_tokens?: number };
  turns?: unknown[];
  [member: string]: unknown;
}

const LEAVE = new Set(["/exit", "/quit"]);

export async function chatCommand(ctx: Context, agent: string): Promise<ExitCode> {
  const { client, out } = ctx;
  const session = (await client.sessions.create(agent)) as SessionView;
  if (out.json) out.jsonLine(session);
  else out.note(out.styleErr("dim", `${agent} · session ${session.id} · /exit or Ctrl-C to leave`));
  const messages = messageSource(ctx);
  let failed = false;
  try {
    for (;;) {
      const message = await messages.next();
      if (message === undefined || LEAVE.has(message.trim())) break;
      if (message.trim() === "") continue;
      const turn = await client.sessions.send(session.id, { message }, { wait: 0 });
      const status = await followTurn(ctx, session.id, String(turn.id));
      if (status !== "completed") failed = true;
    }
  } finally {
    messages.close();
  }
  const closed = (await client.sessions.close(session.id)) as SessionView;
  if (out.json) out.jsonLine(closed);
  else {
    const turns = closed.turns?.length ?? 0;
    const cache = formatCacheShare(closed.usage);
    const parts = ["session closed", `${turns} turn${turns === 1 ? "" : "s"}`, ...(cache ? [cache] : [])];
    out.note(out.styleErr("dim", [...parts, formatCost(closed.usage?.total_cost_usd)].join(" · ")));
  }
  return failed ? EXIT.taskFailed : EXIT.ok;
}

/** Streams one turn to its end, answering what it waits for; its status (completed, failed, canceled). */
async function followTurn(ctx: Context, sessionId: string, turnId: string): Promise<string> {
  const { client, out } = ctx;
  const renderer = new RunRenderer(out, createSpinner(out.live));
  const path = `/v1/sessions/${encodeURIComponent(sessionId)}/turns/${encodeURIComponent(turnId)}/events`;
  const ends = (event: OutpostEvent) => event.depth === undefined && event.event_type === "turn_finished";
  let after = 0;
  try {
    if (!out.json) renderer.begin("thinking");
    for (;;) {
      let last: OutpostEvent | undefined;
      for await (const event of client.events(path, { after, until: (e) => ends(e) || startsWait(e) })) {
        after = event.seq;
        if (out.json) out.jsonLine(event);
        else renderer.event(event);
        last = event;
      }
      if (!last || !startsWait(last)) return String(last?.payload.status ?? "completed");
      const view = (await client.sessions.get(sessionId)) as SessionView;
      if (view.status !== "input_required" || !view.pending_input) continue;
      renderer.stop();
      await answerOrLeave(ctx, { kind: "session", id: sessionId }, view.pending_input, view);
    }
  } finally {
    renderer.stop();
  }
}

interface MessageSource {
  /** The next message, or undefined when the person leaves. */
  next(): Promise<string | undefined>;
  close(): void;
}

/** A prompt on a terminal; lines of stdin otherwise (a script, a pipe). */
function messageSource(ctx: Context): MessageSource {
  if (ctx.out.canAsk) {
    return {
      next: async () => {
        const message = await text({ message: "You", placeholder: "" });
        return isCancel(message) ? undefined : message;
      },
      close: () => undefined,
    };
  }
  const lines = createInterface({ input: process.stdin, terminal: false });
  const iterator = lines[Symbol.asyncIterator]();
  return {
    next: async () => {
      const line = await iterator.next();
      return line.done ? undefined : line.value;
    },
    close: () => lines.close(),
  };
}
