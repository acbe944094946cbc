// The RUNS bucket the tests read and write directly: R2, as wrangler.toml binds it (the self-hosted directory store
// has its own tests, test/blob-store/). Env types RUNS as optional because a self-hosted Worker has none.
import { env } from "cloudflare:workers";
import type { BlobStore } from "../../src/blob-store/blob-store.ts";
import { R2BlobStore } from "../../src/blob-store/r2-blob-store.ts";

export function runsBucket(): R2Bucket {
  if (!env.RUNS) throw new Error("wrangler.toml binds the RUNS bucket; the tests need it");
  return env.RUNS;
}

/** The same bucket behind the blob-store interface, as the Worker's code takes it. */
export function runsStore(): BlobStore {
  return new R2BlobStore(runsBucket());
}
