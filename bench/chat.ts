// The conversation case of `npm run bench`: one chat session of CHAT_MESSAGES messages against the emulator, each
// sent with POST /v1/sessions/:id/messages?wait= and timed as the client sees it. Per message: the Outpost workerd's
// CPU, and the overhead beyond model time (wall time − the emulator's service time for that message's model call).
// What Outpost does per message must not grow with the conversation: the late messages are compared with the early
// ones measured in the same run, by the median of each window (a mean moved with any one slow message: a collection,
// the machine, a directory report landing in that message's window).
import { performance } from "node:perf_hooks";
import type { RequestRecord } from "../emulator/server.ts";
import { AGENT, API_KEY, CHAT_MARKER, CHAT_MESSAGES } from "./config.ts";
import { httpJson } from "./http.ts";
import { mean, percentile, round } from "./util.ts";
import { cpuMs, type WranglerDev } from "./wrangler.ts";

export interface ChatMessage {
  index: number;
  wallMs: number;
  serviceMs: number;
  overheadMs: number;
  cpuMs: number;
}

export interface ChatWindow {
  cpuMs: number;
  overheadMs: number;
  meanCpuMs: number;
  meanOverheadMs: number;
}

export interface ChatResult {
  sessionId: string;
  messages: ChatMessage[];
  /**
   * Medians (and means) over messages 2–11 and the last ten, and late ÷ early of the medians. A mean moves with one
   * message's disturbance (a collection, the machine, the tenant's directory report, due at most once a second, landing
   * in one message's window); the median says what a message costs.
   */
  early: ChatWindow;
  late: ChatWindow;
  cpuRatio: number;
  overheadRatio: number;
}

/**
 * The script: one short reply per message, and one for the message that closes the last one's window (the emulator
 * picks replies by the assistant messages it is sent).
 */
export function chatScript(): unknown {
  return {
    match: CHAT_MARKER,
    turns: Array.from({ length: CHAT_MESSAGES + 1 }, (_, i) => ({
      content: [{ type: "text", text: `Reply ${i + 1}: noted, and here is a short answer to go on with.` }],
    })),
  };
}

export async function runChat(
  dev: WranglerDev,
  baseUrl: string,
  stats: () => Promise<RequestRecord[]>,
): Promise<ChatResult> {
  const created = await httpJson("POST", `${baseUrl}/v1/agents/${AGENT}/sessions`, { apiKey: API_KEY, body: {} });
  const sessionId = (created.body as { id?: unknown } | null)?.id;
  if (created.status !== 201 || typeof sessionId !== "string") {
    throw new Error(`POST /v1/agents/${AGENT}/sessions: HTTP ${created.status}: ${JSON.stringify(created.body)}`);
  }
  const timed: { index: number; wallMs: number; cpuMs: number }[] = [];
  // A message's CPU runs from its POST to the next message's: what the object does after answering (its bundle, its
  // report) counts with the message that caused it. One more message, not measured, closes the last one's window as
  // the others' are closed.
  const cpuAt: number[] = [];
  for (let index = 1; index <= CHAT_MESSAGES + 1; index++) {
    const message = index === 1 ? `${CHAT_MARKER} Let us talk about a small project.` : `Message ${index}: go on.`;
    cpuAt.push(cpuMs(dev.workerPid));
    const t0 = performance.now();
    const res = await httpJson("POST", `${baseUrl}/v1/sessions/${sessionId}/messages?wait=60`, {
      apiKey: API_KEY,
      body: { message },
    });
    const wallMs = performance.now() - t0;
    const turn = res.body as { status?: unknown } | null;
    if (res.status !== 200 || turn?.status !== "completed") {
      throw new Error(`message ${index}: HTTP ${res.status}: ${JSON.stringify(res.body)}`);
    }
    if (index <= CHAT_MESSAGES) timed.push({ index, wallMs, cpuMs: Number.NaN });
  }
  for (const [i, t] of timed.entries()) t.cpuMs = (cpuAt[i + 1] ?? Number.NaN) - (cpuAt[i] ?? Number.NaN);
  // The model calls of this session, in order: one per message.
  const records = (await stats()).filter((r) => r.task_id === sessionId).sort((a, b) => a.turn - b.turn);
  const messages = timed.map((t, i): ChatMessage => {
    const serviceMs = records[i]?.service_ms ?? Number.NaN;
    return {
      index: t.index,
      wallMs: round(t.wallMs),
      serviceMs: round(serviceMs),
      overheadMs: round(t.wallMs - serviceMs),
      cpuMs: round(t.cpuMs),
    };
  });
  const window = (from: number, to: number): ChatWindow => {
    const part = messages.filter((m) => m.index >= from && m.index <= to);
    const cpu = part.map((m) => m.cpuMs);
    const overhead = part.map((m) => m.overheadMs);
    return {
      cpuMs: round(percentile(cpu, 50)),
      overheadMs: round(percentile(overhead, 50)),
      meanCpuMs: round(mean(cpu)),
      meanOverheadMs: round(mean(overhead)),
    };
  };
  const early = window(2, 11);
  const late = window(CHAT_MESSAGES - 9, CHAT_MESSAGES);
  return {
    sessionId,
    messages,
    early,
    late,
    cpuRatio: round(late.cpuMs / early.cpuMs),
    overheadRatio: round(late.overheadMs / early.overheadMs),
  };
}
