// The model emulator's HTTP server: the model endpoints of its wire formats (Anthropic Messages, also as Bedrock and
// Vertex AI serve it, OpenAI Chat Completions, Gemini generateContent) over one script, fault, latency, prompt cache
// billing (emulator/billing.ts) and stats machinery, Google's token endpoint for Vertex's callers, an OpenTelemetry
// collector's traces endpoint (emulator/traces.ts), plus the /_emulator control plane (scripts, reset, stats, the cache
// clock, received traces). Deterministic on purpose: tests, benchmarks and offline dev all rely on it.
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";
import { bedrock } from "./bedrock.ts";
import { billedUsage, credentialOf, DEFAULT_PREFILL_MS_PER_1K_TOKENS, PromptBilling } from "./billing.ts";
import { promptTokens, rateLimitHeaders, refusalSpec, ServiceConditions } from "./conditions.ts";
import { answerEmbeddings, embeddingsPath } from "./embeddings.ts";
import { gemini } from "./gemini.ts";
import { GoogleTokenEndpoint, TOKEN_PATH } from "./google-token.ts";
import { openai } from "./openai.ts";
import type { Dialect, RequestContext } from "./reply.ts";
import { estimateInputTokens, isRecord } from "./request.ts";
import { type Exchange, sendError, sendHttpFault, sendJson, sendMessage, streamMessage } from "./respond.ts";
import { ScriptStore } from "./script.ts";
import { parseScript } from "./script-checks.ts";
import { type RequestRecord, statsAnswer } from "./stats.ts";
import { TraceCollector } from "./traces.ts";
import { vertex } from "./vertex.ts";
import { anthropic } from "./wire.ts";

export interface EmulatorOptions {
  host?: string;
  port?: number;
  ttftMs?: number;
  tokenDelayMs?: number;
  quiet?: boolean;
  /** Bill prompt caching as the providers do for every request (emulator/billing.ts); else only scripts that ask. */
  promptCache?: boolean;
  /** Time to first token per 1,000 uncached input tokens while billing (default DEFAULT_PREFILL_MS_PER_1K_TOKENS). */
  prefillMsPer1kTokens?: number;
}

// Re-exported for the modules that have long imported them from here (bench/, test/llm/auth-providers.test.ts).
export type { PromptUnitRecord, RequestRecord } from "./stats.ts";

export interface RunningEmulator {
  url: string;
  port: number;
  close(): Promise<void>;
  stats(): RequestRecord[];
  reset(): void;
  /** The JSON keys of Vertex's test service account, and of one with a key the token endpoint does not know. */
  serviceAccounts: { known: string; unknown: string };
}

const MAX_BODY_BYTES = 64 * 1024 * 1024;

export async function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  const host = options.host ?? "127.0.0.1";
  const defaults = { ttftMs: options.ttftMs ?? 0, tokenDelayMs: options.tokenDelayMs ?? 0 };
  const scripts = new ScriptStore();
  const conditions = new ServiceConditions();
  const billing = new PromptBilling({
    promptCache: options.promptCache ?? false,
    prefillMsPer1kTokens: options.prefillMsPer1kTokens ?? DEFAULT_PREFILL_MS_PER_1K_TOKENS,
  });
  const traces = new TraceCollector();
  const inFlight = new Set<AbortController>();
  let records: RequestRecord[] = [];
  let requestCounter = 0;
  // Made once the server's URL is known: its service accounts' token_uri points back here.
  let google: GoogleTokenEndpoint | undefined;
  let dialects: readonly Dialect[] = [anthropic, openai, gemini, bedrock];

  const log = (line: string): void => {
    if (!options.quiet) process.stderr.write(`${line}\n`);
  };

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const requestId = `req_emu_${++requestCounter}`;
    const startedAt = Date.now();
    const controller = new AbortController();
    inFlight.add(controller);
    let bodyDoneAt = performance.now();
    let record: RequestRecord | null = null;
    const exchange: Exchange = {
      res,
      signal: controller.signal,
      headers: { "request-id": requestId },
      serviceMs: () => Math.round((performance.now() - bodyDoneAt) * 100) / 100,
      finish(status) {
        if (!record || record.ended_at_ms !== -1) return;
        record.status = status;
        if (status !== 200) record.usage = null;
        record.ended_at_ms = Date.now();
        record.service_ms = exchange.serviceMs();
        records.push(record);
        log(
          `${record.request_id} ${record.provider} ${record.status} turn=${record.turn} script=${record.script_match ?? "-"} fault=${record.fault ?? record.refusal ?? "-"} ${record.service_ms}ms`,
        );
      },
    };
    res.on("close", () => {
      inFlight.delete(controller);
      // Aborting wakes any pending sleep, so timers never outlive a disconnected client.
      if (!res.writableFinished) controller.abort();
      exchange.finish(res.headersSent ? res.statusCode : 499);
    });

    const url = new URL(req.url ?? "/", "http://emulator");
    const path = url.pathname.replace(/\/+$/, "") || "/";
    const route = `${req.method ?? "GET"} ${path}`;
    // Errors on a provider's path come in that provider's shape; everything else answers like the Messages API.
    const dialect = dialects.find((candidate) => candidate.matches(path)) ?? null;
    if (dialect) Object.assign(exchange.headers, dialect.headers(requestId));
    let body: unknown;
    let rawBody: Buffer = Buffer.alloc(0);
    try {
      rawBody = await readBody(req);
      if (google && route === `POST ${TOKEN_PATH}`) {
        const answer = google.exchange(rawBody.toString("utf8"));
        return sendJson(exchange, answer.status, answer.body);
      }
      body = parseJsonBody(rawBody);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      sendError(exchange, dialect ?? anthropic, { status: message.includes("too large") ? 413 : 400, message });
      return;
    }
    bodyDoneAt = performance.now();

    const embeddings = req.method === "POST" ? embeddingsPath(path) : null;
    if (embeddings) {
      // OpenAI's embeddings (emulator/embeddings.ts): the key is a Bearer token, or Azure's api-key header.
      const bearer = /^Bearer\s+(\S+)/i.exec(req.headers.authorization ?? "")?.[1];
      const azureKey = req.headers["api-key"];
      const key = bearer ?? (typeof azureKey === "string" && azureKey !== "" ? azureKey : null);
      const answer = answerEmbeddings(body, key, embeddings.azureDeployment);
      return sendJson(exchange, answer.status, answer.body, { "x-request-id": requestId });
    }

    if (dialect && req.method === "POST") {
      const context: RequestContext = { url, headers: req.headers, rawBody };
      const parsed = dialect.parse(body, context);
      const taskId = req.headers["x-outpost-task-id"];
      const sent = isRecord(body) ? body : {};
      record = {
        request_id: requestId,
        provider: dialect.provider,
        path,
        auth: null,
        task_id: typeof taskId === "string" ? taskId : null,
        model: parsed.ok ? parsed.value.model : typeof sent.model === "string" ? sent.model : null,
        stream: parsed.ok ? parsed.value.stream : sent.stream === true,
        turn: parsed.ok ? scripts.turnOf(parsed.value.messages) : 0,
        script_match: null,
        status: 0,
        fault: null,
        refusal: null,
        started_at_ms: startedAt,
        ended_at_ms: -1,
        service_ms: 0,
        usage: null,
        prompt_units: [],
        breakpoints: [],
        min_cacheable_tokens: null,
        ttft_ms: null,
      };
      const auth = dialect.authenticate?.(context);
      record.auth = auth?.record ?? null;
      if (auth?.failure) return sendError(exchange, dialect, auth.failure);
      const missingKey = dialect.missingKey(context);
      if (missingKey !== null) return sendError(exchange, dialect, { status: 401, message: missingKey });
      if (!parsed.ok) return sendError(exchange, dialect, { status: 400, message: parsed.message });
      const request = parsed.value;
      const view = dialect.cacheView(sent, request, context);
      if (!view.ok) return sendError(exchange, dialect, { status: 400, message: view.message });
      record.prompt_units = view.value.units.map(({ tokens, prefix_hash }) => ({ tokens, prefix_hash }));
      record.breakpoints = view.value.breakpoints.map((breakpoint) => breakpoint.index);
      // The script's service conditions (emulator/conditions.ts) admit the request before its turn is selected, so a
      // refusal is not billed and leaves the turn's attempts (and faults) as they were.
      const script = scripts.find(request);
      const turn = record.turn;
      const admission = script
        ? conditions.admit(script, {
            provider: dialect.provider,
            maxTokens: request.maxTokens,
            promptTokens: () =>
              promptTokens(
                script.turns[turn]?.usage,
                billing.billsCaching(script)
                  ? view.value.units.reduce((sum, unit) => sum + unit.tokens, 0)
                  : estimateInputTokens(request),
              ),
          })
        : null;
      if (admission?.bucket) Object.assign(exchange.headers, rateLimitHeaders(dialect.provider, admission.bucket));
      if (script && admission?.refusal) {
        record.script_match = script.match;
        record.refusal = admission.refusal.kind;
        return sendError(exchange, dialect, refusalSpec(dialect.provider, admission.refusal));
      }
      const selected = scripts.select(request, dialect.ids);
      if (!selected.ok) {
        record.script_match = selected.script.match;
        return sendError(exchange, dialect, { status: 400, message: selected.message });
      }
      const { selection } = selected;
      record.script_match = selection.script?.match ?? null;
      record.fault = selection.fault?.kind ?? null;
      if (selection.fault?.kind === "http") return sendHttpFault(exchange, dialect, selection.fault);
      const billed = billing.bill({
        provider: dialect.provider,
        model: request.model,
        view: view.value,
        script: selection.script,
        credential: credentialOf(context, record.auth),
        scripted: selection.usage,
      });
      record.min_cacheable_tokens = billed.minCacheableTokens;
      const reply = {
        id: selection.messageId,
        model: request.model,
        blocks: selection.blocks,
        stopReason: selection.stopReason,
        stopSequence: selection.stopSequence,
        usage: billed.usage,
        inputTokensEstimate: estimateInputTokens(request),
        ...(selection.serverToolUse ? { serverToolUse: selection.serverToolUse } : {}),
        ...(billed.cacheCreation ? { cacheCreation: billed.cacheCreation } : {}),
        diagnostics: billed.diagnostics,
        ...(request.compaction ? { compaction: true } : {}),
      };
      const rendered = dialect.render(reply, request);
      billing.remember(reply.id, billed);
      record.usage = billedUsage(rendered.usage, billed.cacheCreation);
      const pacing = {
        ttftMs: billing.ttftMs(selection.ttftMs ?? defaults.ttftMs, billed, rendered.usage),
        tokenDelayMs: selection.tokenDelayMs ?? defaults.tokenDelayMs,
      };
      record.ttft_ms = pacing.ttftMs;
      if (request.stream) return streamMessage(exchange, dialect, rendered, selection.fault, pacing);
      return sendMessage(exchange, dialect, rendered, selection.fault, pacing);
    }

    switch (route) {
      case "POST /v1/messages/count_tokens": {
        // count_tokens takes no max_tokens: a placeholder above any thinking budget, which parsing compares with it. It
        // checks compaction blocks as /v1/messages does, and counts a compaction request's conversation as sent.
        const sent = isRecord(body) ? { max_tokens: 1_000_000, ...body } : body;
        const parsed = anthropic.parse(sent, { url, headers: req.headers, rawBody });
        if (!parsed.ok) return sendError(exchange, anthropic, { status: 400, message: parsed.message });
        return sendJson(exchange, 200, { input_tokens: estimateInputTokens(parsed.value) });
      }
      case "POST /_emulator/scripts": {
        const parsed = parseScript(body);
        if (!parsed.ok) return sendError(exchange, anthropic, { status: 400, message: parsed.message });
        return sendJson(exchange, 201, { id: scripts.register(parsed.value).id });
      }
      case "GET /_emulator/scripts":
        return sendJson(exchange, 200, { scripts: scripts.list() });
      case "DELETE /_emulator/scripts":
        scripts.clear();
        conditions.clear();
        return sendJson(exchange, 200, { ok: true });
      case "POST /v1/traces": {
        // An OpenTelemetry collector's OTLP/HTTP JSON endpoint (emulator/traces.ts).
        const headers = Object.fromEntries(
          Object.entries(req.headers).flatMap(([name, value]) => (typeof value === "string" ? [[name, value]] : [])),
        );
        const problem = traces.receive(body, headers);
        if (problem) return sendJson(exchange, 400, { code: 3, message: problem });
        return sendJson(exchange, 200, {});
      }
      case "GET /_emulator/traces": {
        const traceId = url.searchParams.get("trace_id");
        const taskId = url.searchParams.get("task_id");
        const spans = traceId ? traces.trace(traceId) : taskId ? traces.withAttribute("outpost.task.id", taskId) : [];
        return sendJson(exchange, 200, { spans });
      }
      case "POST /_emulator/cache/advance": {
        // Ages the prompt caches (emulator/prompt-cache.ts) by `ms`, or one script's partitions alone, without sleeping.
        const { ms, match } = isRecord(body) ? body : {};
        if (typeof ms !== "number" || !Number.isFinite(ms) || ms < 0) {
          return sendError(exchange, anthropic, { status: 400, message: "ms: must be a non-negative number" });
        }
        if (match !== undefined && (typeof match !== "string" || match === "")) {
          return sendError(exchange, anthropic, { status: 400, message: "match: must be a non-empty string" });
        }
        return sendJson(exchange, 200, { match: match ?? null, ...billing.cache.advance(ms, match ?? null) });
      }
      case "POST /_emulator/reset":
        scripts.clear();
        conditions.clear();
        traces.reset();
        billing.reset();
        records = [];
        return sendJson(exchange, 200, { ok: true });
      case "GET /_emulator/stats": {
        // Optional filters, so a caller that wants one task's or one script's requests need not read them all.
        const filters = { taskId: url.searchParams.get("task_id"), match: url.searchParams.get("match") };
        const conditioned = scripts
          .list()
          .filter((script) => script.rate_limit || script.outage || script.context_window !== undefined)
          .map((script) => script.match);
        return sendJson(exchange, 200, statsAnswer(records, filters, conditioned));
      }
      case "GET /_emulator/health":
        return sendJson(exchange, 200, { ok: true });
      default:
        return sendError(exchange, dialect ?? anthropic, { status: 404, message: `Not found: ${req.method} ${path}` });
    }
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((error: unknown) => {
      log(`emulator: request failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(JSON.stringify({ type: "error", error: { type: "api_error", message: "emulator internal error" } }));
      } else {
        res.destroy();
      }
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port ?? 0, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":") ? `[${host}]` : host;
  const url = `http://${urlHost}:${port}`;
  google = new GoogleTokenEndpoint(url);
  dialects = [anthropic, openai, gemini, bedrock, vertex(google)];

  return {
    url,
    serviceAccounts: google.serviceAccounts,
    port,
    stats: () => records.map((record) => ({ ...record })),
    reset() {
      scripts.clear();
      conditions.clear();
      traces.reset();
      billing.reset();
      records = [];
    },
    async close() {
      const closed = new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
      });
      for (const controller of inFlight) controller.abort();
      server.closeAllConnections();
      await closed;
      // Responses emit "close" (which stamps their stats record) only once their sockets are fully gone.
      for (let i = 0; i < 40 && inFlight.size > 0; i++) await new Promise((resolve) => setTimeout(resolve, 5));
    },
  };
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // Oversized bodies are drained rather than cut off, so the client still gets a proper 413.
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on("error", reject);
    req.on("end", () => {
      if (size > MAX_BODY_BYTES) return reject(new Error("request body too large"));
      resolve(Buffer.concat(chunks));
    });
  });
}

function parseJsonBody(raw: Buffer): unknown {
  const text = raw.toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error("request body is not valid JSON");
  }
}
