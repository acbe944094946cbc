// What a Durable Object RPC method returns for an expected failure. RPC drops stack traces, so such failures travel
// as data, not exceptions; the Worker maps them to HTTP errors. A leaf: it imports nothing from the rest of src/.

export interface RpcFailure {
  code: string;
  message: string;
  /**
   * Further members of the HTTP error body (e.g. the current pending_input). Typed as objects, not unknown, since
   * RPC result types collapse unknown to never.
   */
  details?: Record<string, object>;
}

/** Stubs type RPC results as `T & Disposable`, which defeats narrowing on a discriminant; test `error` instead. */
export type RpcResult<T> =
  | { ok: true; value: T; error?: undefined }
  | { ok: false; value?: undefined; error: RpcFailure };
