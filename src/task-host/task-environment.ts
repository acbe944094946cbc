// A task object's one environment, built once per instance from the Worker's Env: what its runs take from the
// deployment (src/runtime/run-environment.ts), and what its callbacks, telemetry and retention read there.
import type { BlobStore } from "../blob-store/blob-store.ts";
import { openBlobStore } from "../blob-store/open-blob-store.ts";
import { callbackPolicy } from "../callbacks/policy.ts";
import { retrySchedule } from "../callbacks/retry-schedule.ts";
import { tenantSigningSecret } from "../callbacks/signing.ts";
import { loadPriceTable, type PriceTable } from "../config/prices.ts";
import { retentionPolicyOrDefault } from "../config/retention.ts";
import type { Env } from "../env.ts";
import { Redactor } from "../events/redaction.ts";
import type { KnowledgeSearch } from "../knowledge/collection.ts";
import { knowledgeSearchFor } from "../knowledge/knowledge-stub.ts";
import { secretLookup } from "../lib/secrets.ts";
import type { Fetch, LlmConfig, ModelProvider } from "../llm/provider.ts";
import { createProvider, workerProviderEnvironment } from "../llm/providers.ts";
import { type OutboundPolicy, outboundPolicy, tenantOutboundPolicy } from "../net/outbound.ts";
import { providerWaitMs } from "../runtime/provider-retry.ts";
import type { RunEnvironment } from "../runtime/run-environment.ts";
import { BUNDLED_SKILL_FILES } from "../skills/bundled.generated.ts";
import { SkillCatalog } from "../skills/catalog.ts";
import { otelConfig } from "../telemetry/otlp-export.ts";

export class TaskEnvironment implements RunEnvironment {
  readonly env: Env;
  /** The deployment's secrets and credential shapes: nothing leaves the object without passing it. */
  readonly redactor: Redactor;
  /** Run bundles, spilled steps, large workspace files, uploaded skills: R2, or a directory when self-hosted. */
  readonly blobs: BlobStore;
  readonly secret: (name: string) => string | undefined;

  constructor(env: Env) {
    this.env = env;
    this.redactor = Redactor.fromEnv(env);
    this.blobs = openBlobStore(env);
    this.secret = secretLookup(env);
  }

  readonly provider = (llm: LlmConfig | null, transport?: Fetch): Promise<ModelProvider> =>
    // No retries of the clients' own: the runtime decides each one (src/runtime/provider-retry.ts).
    createProvider(llm, { ...workerProviderEnvironment(this.env, 0), transport });

  readonly prices = (): PriceTable => loadPriceTable(this.env.OUTPOST_PRICES);

  readonly providerWaitMs = (agentSeconds: number | null): number =>
    providerWaitMs(agentSeconds, this.env.OUTPOST_PROVIDER_WAIT_SECONDS);

  readonly outbound = (run: { tenant: string; runtimeAgent: boolean }): OutboundPolicy =>
    run.runtimeAgent
      ? tenantOutboundPolicy(this.env.OUTPOST_TENANT_PRIVATE_HOSTS, run.tenant)
      : outboundPolicy(this.env.OUTPOST_ALLOW_PRIVATE_HOSTS);

  readonly skills = (): Promise<SkillCatalog> => SkillCatalog.load(BUNDLED_SKILL_FILES, this.blobs);

  readonly knowledge = (tenant: string): KnowledgeSearch => knowledgeSearchFor(this.env, tenant);

  /** How long an ended task is kept (OUTPOST_RETENTION), read when a task ends. */
  readonly retention = () => retentionPolicyOrDefault(this.env.OUTPOST_RETENTION);

  /** The callbacks' own policy, never the tools' OUTPOST_ALLOW_PRIVATE_HOSTS, at every attempt. */
  readonly callbackPolicy = () => callbackPolicy(this.env);

  /** The secret a tenant's callbacks are signed with, derived from OUTPOST_WEBHOOK_SECRET; undefined when unset. */
  readonly signingSecret = async (tenant: string): Promise<string | undefined> =>
    this.env.OUTPOST_WEBHOOK_SECRET ? tenantSigningSecret(this.env.OUTPOST_WEBHOOK_SECRET, tenant) : undefined;

  readonly callbackRetrySeconds = () => retrySchedule(this.env.OUTPOST_CALLBACK_RETRY_SECONDS);

  /** Whether runs' spans are exported (OUTPOST_OTEL_ENDPOINT set): off, the object builds nothing for them. */
  get telemetryOn(): boolean {
    return Boolean(this.env.OUTPOST_OTEL_ENDPOINT);
  }

  /** Where spans go and how (src/telemetry/), read at each export; null when telemetry is off. */
  readonly telemetry = () => otelConfig(this.env);
}
