// Hono's typing for this app: the Worker's bindings and per-request variables.
import type { Env } from "../env.ts";
import type { ApiKey } from "../tenants/api-keys.ts";

export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    /** The request's API key (set by requireApiKey): its id, tenant and scopes. */
    apiKey: ApiKey;
    /** The key's id, as recorded in decisions: the configured id, or key_<12 hex digits of its digest>. */
    apiKeyId: string;
    /** The tenant whose tasks this request may see. */
    tenant: string;
  };
}
