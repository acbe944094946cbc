// The benchmark's HTTP client for Outpost: JSON requests and an SSE reader built on node:http (keep-alive), so the
// arrival time of each frame is taken in the 'data' callback that delivers it, with no stream layers in between.
import { Agent, type IncomingHttpHeaders, request } from "node:http";
import { performance } from "node:perf_hooks";

const agent = new Agent({ keepAlive: true, maxSockets: Number.POSITIVE_INFINITY });

export interface JsonResponse {
  status: number;
  body: unknown;
}

export function httpJson(
  method: string,
  url: string,
  options: { apiKey?: string; body?: unknown; timeoutMs?: number } = {},
): Promise<JsonResponse> {
  return new Promise((resolve, reject) => {
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    const headers: Record<string, string> = { accept: "application/json" };
    if (options.apiKey) headers.authorization = `Bearer ${options.apiKey}`;
    if (payload !== undefined) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(Buffer.byteLength(payload));
    }
    const req = request(url, { method, headers, agent }, (res) => {
      res.setEncoding("utf8");
      let text = "";
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("error", reject);
      res.on("end", () => {
        let body: unknown = text;
        try {
          body = text === "" ? null : JSON.parse(text);
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: res.statusCode ?? 0, body });
      });
    });
    req.setTimeout(options.timeoutMs ?? 30_000, () => req.destroy(new Error(`${method} ${url} timed out`)));
    req.on("error", reject);
    req.end(payload);
  });
}

export interface SseFrame {
  id: number | null;
  event: string | null;
  data: string;
  /** performance.now() when the chunk holding the end of this frame arrived. */
  arrivedAt: number;
}

export interface SseResult {
  status: number;
  frames: SseFrame[];
  /** performance.now() when the response ended. */
  endedAt: number;
}

/**
 * Reads an SSE response to its end; `onFrame` sees each frame as it arrives. A GET, or with `post` a POST of its
 * JSON body (a task created with Accept: text/event-stream), whose headers `post.onHeaders` sees when they arrive.
 */
export function readSse(
  url: string,
  apiKey: string,
  onFrame?: (frame: SseFrame) => void,
  post?: { body: unknown; onHeaders: (headers: IncomingHttpHeaders) => void },
): Promise<SseResult> {
  const method = post ? "POST" : "GET";
  const headers: Record<string, string> = { accept: "text/event-stream", authorization: `Bearer ${apiKey}` };
  if (post) headers["content-type"] = "application/json";
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, agent }, (res) => {
      post?.onHeaders(res.headers);
      const frames: SseFrame[] = [];
      if (res.statusCode !== 200) {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          text += chunk;
        });
        res.on("end", () => reject(new Error(`${method} ${url}: HTTP ${res.statusCode}: ${text.slice(0, 300)}`)));
        return;
      }
      res.setEncoding("utf8");
      let buffer = "";
      res.on("data", (chunk: string) => {
        const arrivedAt = performance.now();
        buffer += chunk;
        let end = buffer.indexOf("\n\n");
        while (end !== -1) {
          const raw = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          end = buffer.indexOf("\n\n");
          const frame = parseFrame(raw, arrivedAt);
          if (!frame) continue;
          frames.push(frame);
          onFrame?.(frame);
        }
      });
      res.on("error", reject);
      res.on("end", () => resolve({ status: 200, frames, endedAt: performance.now() }));
    });
    req.setTimeout(20_000, () => req.destroy(new Error(`${method} ${url}: no data for 20 s`)));
    req.on("error", reject);
    req.end(post ? JSON.stringify(post.body) : undefined);
  });
}

/** One SSE frame's fields; null for frames with no data (retry:, comments). */
function parseFrame(raw: string, arrivedAt: number): SseFrame | null {
  let id: number | null = null;
  let event: string | null = null;
  const data: string[] = [];
  for (const line of raw.split("\n")) {
    if (line.startsWith(":")) continue;
    const colon = line.indexOf(":");
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? "" : line.slice(colon + 1).replace(/^ /, "");
    if (field === "id") id = Number(value);
    else if (field === "event") event = value;
    else if (field === "data") data.push(value);
  }
  if (id === null && data.length === 0) return null;
  return { id, event, data: data.join("\n"), arrivedAt };
}

export function closeHttpAgent(): void {
  agent.destroy();
}
