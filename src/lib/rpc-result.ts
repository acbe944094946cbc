// A result from another Durable Object's RPC method, as plain data the caller may keep. A result that is kept holds
// its call's session open (and any stub inside it) until the isolate collects it, so the caller copies what it needs
// and disposes of the result at once: one helper instead of the two steps written out at each call.

/** A structured copy of `result`, after which `result` itself is disposed. */
export function copiedResult<T>(result: T): T {
  const copy = structuredClone(result);
  (result as Partial<Disposable> | null)?.[Symbol.dispose]?.();
  return copy;
}
