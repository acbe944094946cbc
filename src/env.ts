// The Worker's bindings, vars and secrets (see wrangler.toml). One interface shared by the Worker and the
// Durable Object, and made the ambient `Cloudflare.Env` so `env` from "cloudflare:workers" is typed in tests.

import type { EvaluationObject } from "../durable-objects/evaluation-object.ts";
import type { KnowledgeObject } from "../durable-objects/knowledge-object.ts";
import type { RateLimiter } from "../durable-objects/rate-limiter.ts";
import type { ScheduleObject } from "../durable-objects/schedule-object.ts";
import type { TaskObject } from "../durable-objects/task-object.ts";
import type { TenantObject } from "../durable-objects/tenant-object.ts";

export interface Env {
  /** One Durable Object per task. */
  TASKS: DurableObjectNamespace<TaskObject>;
  /** One Durable Object per tenant: the directory of its tasks and sessions. */
  TENANTS: DurableObjectNamespace<TenantObject>;
  /** One Durable Object per schedule (POST /v1/schedules), driven by its own alarm. */
  SCHEDULES: DurableObjectNamespace<ScheduleObject>;
  /** One Durable Object per tenant: its collections of documents and their search (PUT /v1/collections/…). */
  KNOWLEDGE: DurableObjectNamespace<KnowledgeObject>;
  /**
   * Optional: a Cloudflare Vectorize index (cosine metric, the embedding model's dimensions) that searches the chunks of
   * collections instead of the exact search in the knowledge object's SQLite (docs/operations/deploy.md).
   */
  KNOWLEDGE_INDEX?: Vectorize;
  /** One Durable Object per evaluation run (POST /v1/agents/:name/evaluations): its runs, their grades, its report. */
  EVALUATIONS: DurableObjectNamespace<EvaluationObject>;
  /**
   * The R2 bucket of run bundles (runs/<task_id>/…), spilled journal steps, large workspace files and uploaded
   * skills. Absent when self-hosted, where RUNS_DIRECTORY holds them (src/blob-store/open-blob-store.ts).
   */
  RUNS?: R2Bucket;
  /** Self-hosted only (`npm start`): workerd's disk service over the directory that holds what RUNS holds on Cloudflare. */
  RUNS_DIRECTORY?: Fetcher;
  /** Secret. Without it (and without ANTHROPIC_BASE_URL) model calls fail with provider_not_configured. */
  ANTHROPIC_API_KEY?: string;
  /** Any Anthropic-compatible endpoint: the local emulator, a gateway. Empty means api.anthropic.com. */
  ANTHROPIC_BASE_URL?: string;
  /**
   * Secret: the API keys accepted on /v1 routes, as a JSON list of {id?, tenant, scopes, sha256, rate_limit_per_minute?}
   * (keys stored hashed), or a plain comma-separated list of keys for local development.
   */
  OUTPOST_API_KEYS?: string;
  /** Default model for agents that do not pin one. */
  OUTPOST_DEFAULT_MODEL?: string;
  /** JSON price overrides, merged over src/config/prices.ts. */
  OUTPOST_PRICES?: string;
  /**
   * Hosts that agents' tools (MCP servers, WebFetch) may reach although they are private, loopback or link-local:
   * comma-separated hostnames or IP literals, or "*". Empty: none (the default).
   */
  OUTPOST_ALLOW_PRIVATE_HOSTS?: string;
  /**
   * The private hosts an agent a tenant adds at runtime (PUT /v1/agents/:name) may reach, which never uses
   * OUTPOST_ALLOW_PRIVATE_HOSTS: a JSON object, tenant → list of "host:port" (e.g. {"acme": ["10.0.0.5:8443"]}). Empty:
   * none (the default). docs/operations/network-guard.md.
   */
  OUTPOST_TENANT_PRIVATE_HOSTS?: string;
  /** Agents a tenant may add at runtime (PUT /v1/agents/:name), a whole number (default 100). */
  OUTPOST_MAX_RUNTIME_AGENTS?: string;
  /** Versions kept of each of them; a change past it is refused, none is dropped (default 50). */
  OUTPOST_MAX_AGENT_VERSIONS?: string;
  /**
   * Which tenants' tasks and evaluations may inject faults (docs/evaluations.md#fault-injection): "on" or "*" for
   * all, a comma-separated list of tenants, or empty / "off" for none (the default).
   */
  OUTPOST_FAULT_INJECTION?: string;
  /**
   * The browser origins the deployment serves, comma-separated (`https://app.example.com`): /mcp refuses a request whose
   * Origin is not one (403 origin_not_allowed); a request without Origin passes. Empty: none (the default).
   */
  OUTPOST_ALLOWED_ORIGINS?: string;
  /** One Durable Object per API key: its task-creation rate limit. */
  RATE_LIMITER: DurableObjectNamespace<RateLimiter>;
  /** Tasks a key may create per minute, unless its own entry says (default 60). */
  OUTPOST_RATE_LIMIT_PER_MINUTE?: string;
  /**
   * Schedules that may fire (active, paused or revoked) a tenant may hold (default 100): POST /v1/schedules past it
   * is refused 422 schedule_limit_reached.
   */
  OUTPOST_MAX_SCHEDULES_PER_TENANT?: string;
  /**
   * The least time, in seconds, between two due times of a cron schedule (default 60, cron's own minute): a cron whose
   * due times come closer is refused 400 schedule_interval_too_short.
   */
  OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS?: string;
  /**
   * Sub-agent tasks one root task's tree may start, at every depth, the root not counted (default 50, at most
   * 10,000). src/subagents/tree-limits.ts.
   */
  OUTPOST_MAX_TREE_SUBAGENTS?: string;
  /**
   * The budget in USD a root task's sub-agents share when neither the task nor its agent sets max_budget_usd (each
   * child's budget is carved out of it); empty: none (the default). src/subagents/tree-limits.ts.
   */
  OUTPOST_DEFAULT_TREE_BUDGET_USD?: string;
  /**
   * How long one model call may wait out its provider (an outage, a rate limit), in seconds from its first failure,
   * unless its agent says (default 1800). src/runtime/provider-retry.ts.
   */
  OUTPOST_PROVIDER_WAIT_SECONDS?: string;
  /** Secret: the root of every tenant's callback signing secret (Standard Webhooks). Callbacks need it. */
  OUTPOST_WEBHOOK_SECRET?: string;
  /**
   * Private, loopback or link-local hosts that callbacks may reach (same syntax as OUTPOST_ALLOW_PRIVATE_HOSTS, which
   * callbacks never use). Empty: none (the default).
   */
  OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS?: string;
  /** Hosts that callbacks may reach over plain http (comma-separated, or "*"); empty means https only. */
  OUTPOST_HTTP_CALLBACK_HOSTS?: string;
  /** Seconds between callback attempts, comma-separated (default 10,60,300,900,2400: 6 attempts in about an hour). */
  OUTPOST_CALLBACK_RETRY_SECONDS?: string;
  /**
   * The least time, ms, between two reports of a task's status to its tenant's directory, so the most the listings lag
   * it by (default 1000; 50 to 60000): shorter is fresher, and more reports for a run whose status changes often.
   */
  OUTPOST_DIRECTORY_REPORT_MS?: string;
  /** A JSON list of regular expressions redacted from events and run bundles. */
  OUTPOST_REDACT_PATTERNS?: string;
  /**
   * The OTLP/HTTP collector that receives each run's OpenTelemetry GenAI spans (POST <endpoint>/v1/traces, JSON), e.g.
   * http://otel-collector:4318. Empty: telemetry off (the default). See docs/telemetry.md.
   */
  OUTPOST_OTEL_ENDPOINT?: string;
  /** Secret: headers sent with every export, as OTEL_EXPORTER_OTLP_HEADERS writes them (`name=value,…`, percent-encoded). */
  OUTPOST_OTEL_HEADERS?: string;
  /**
   * The OpenAI endpoint of embedding providers that name none (an OpenAI-compatible base URL, e.g. the emulator's
   * http://127.0.0.1:8788/v1); empty means https://api.openai.com/v1. Its key: the secret OPENAI_API_KEY.
   */
  OPENAI_BASE_URL?: string;
  /** The Azure OpenAI resource of azure_openai embedding providers that name none (https://<resource>.openai.azure.com). */
  AZURE_OPENAI_ENDPOINT?: string;
  /** JSON retention policy (seed 003): {default_days, by_status, by_task}, merged over the seed's defaults. */
  OUTPOST_RETENTION?: string;
}

type OutpostEnv = Env;

declare global {
  namespace Cloudflare {
    interface Env extends OutpostEnv {}
    /** Types `exports.default` from "cloudflare:workers" (used by tests) as this Worker's own module. */
    interface GlobalProps {
      mainModule: typeof import("./index.ts");
    }
  }
}
