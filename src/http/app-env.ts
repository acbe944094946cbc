// Hono's typing for this app: the Worker's bindings and per-request variables.
import type { Env } from "../env.ts";

export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string /** A fingerprint of the request's API key (set by requireApiKey). */;
    apiKeyId: string;
  };
}
