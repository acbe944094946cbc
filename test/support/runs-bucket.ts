// The RUNS bucket the tests read and write directly: R2, as wrangler.toml binds it. Env types RUNS as optional
// because a self-hosted Worker has none. And the self-hosted directory store, over a real workerd disk service on a
// temporary directory (started by test/support/global-setup.ts).
import { env } from "cloudflare:workers";
import { inject } from "vitest";
import type { BlobStore } from "../../src/blob-store/blob-store.ts";
import { DiskBlobStore } from "../../src/blob-store/disk-blob-store.ts";
import { R2BlobStore } from "../../src/blob-store/r2-blob-store.ts";

export function runsBucket(): R2Bucket {
  if (!env.RUNS) throw new Error("wrangler.toml binds the RUNS bucket; the tests need it");
  return env.RUNS;
}

/** The same bucket behind the blob-store interface, as the Worker's code takes it. */
export function runsStore(): BlobStore {
  return new R2BlobStore(runsBucket());
}

/** The directory store as the self-hosted Worker has it: every request to the disk service, whatever its host. */
export function diskStore(): BlobStore {
  const url = inject("diskUrl");
  return new DiskBlobStore({
    fetch: (input: RequestInfo | URL, init?: RequestInit) => {
      const target = new URL(input instanceof Request ? input.url : String(input));
      return fetch(`${url}${target.pathname}`, init);
    },
  });
}
