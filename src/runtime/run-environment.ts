// What a run takes from its deployment rather than from its task's storage: the redactor, the model providers, the
// prices, the secrets, the outbound policy, the skills and the knowledge collections. Built once per object from the
// Worker's Env (src/task-host/task-environment.ts); a run with faults sees its provider wrapped (src/faults/).
import type { PriceTable } from "../config/prices.ts";
import type { Redactor } from "../events/redaction.ts";
import type { KnowledgeSearch } from "../knowledge/collection.ts";
import type { Fetch, LlmConfig, ModelProvider } from "../llm/provider.ts";
import type { OutboundPolicy } from "../net/outbound.ts";
import type { SkillCatalog } from "../skills/catalog.ts";

export interface RunEnvironment {
  /** The deployment's redactor: streamed text is held back by it, and tool error text passes through it. */
  redactor: Redactor;
  /**
   * The provider for one run: the agent's llmConfig, or Anthropic (its configuration comes from the Worker's env),
   * sending its requests through `transport` when given. Built inside the run, so a provider that is not configured
   * fails the run with a clear error, not the object.
   */
  provider: (llm: LlmConfig | null, transport?: Fetch) => Promise<ModelProvider>;
  /** Read inside the run, so a bad OUTPOST_PRICES fails the run with config_error rather than the request. */
  prices: () => PriceTable;
  /** How long a model call of `agentSeconds`' agent may wait out its provider, in ms (src/runtime/provider-retry.ts). */
  providerWaitMs: (agentSeconds: number | null) => number;
  /** Reads a Worker secret by name (MCP server headers). */
  secret: (name: string) => string | undefined;
  /**
   * Where the tools of a run of `tenant`'s task may connect, never the callbacks' policy: OUTPOST_ALLOW_PRIVATE_HOSTS
   * for the deployment's own agents; for an agent the tenant added at runtime, only what OUTPOST_TENANT_PRIVATE_HOSTS
   * gives the tenant (src/net/outbound.ts).
   */
  outbound: (run: { tenant: string; runtimeAgent: boolean }) => OutboundPolicy;
  /** The skill catalog (bundled skills and R2 uploads). */
  skills: () => Promise<SkillCatalog>;
  /** A tenant's collections, which the agent's knowledge tools search (the task's tenant's only). */
  knowledge: (tenant: string) => KnowledgeSearch;
}
