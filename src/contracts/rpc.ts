// What a Durable Object RPC method returns for an expected failure. RPC drops stack traces, so such failures travel
// as data, not exceptions; the Worker maps them to HTTP errors. A leaf: it imports only the registry's codes and the
// Json type.
import type { ErrorCode } from "../errors/codes.ts";
import type { JsonObject } from "../lib/json.ts";

/** A refusal with one of the codes `C` (the registry's codes the method can return), for its route to map. */
export interface RpcFailure<C extends ErrorCode = ErrorCode> {
  code: C;
  message: string;
  /** Further members of the HTTP error body (e.g. the current pending_input): JSON, so RPC carries them typed. */
  details?: JsonObject;
}

/**
 * Stubs type RPC results as `T & Disposable`, which defeats narrowing on a discriminant; test `error` instead. `C` lists
 * the codes the method can fail with: its route switches over them, so a code added here fails tsc until handled.
 */
export type RpcResult<T, C extends ErrorCode> =
  | { ok: true; value: T; error?: undefined }
  | { ok: false; value?: undefined; error: RpcFailure<C> };
