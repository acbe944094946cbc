// Chooses the blob store from the Worker's bindings, in this one place: the RUNS_DIRECTORY disk service when it is
// bound (self-hosted with `npm start`), else the RUNS bucket (Cloudflare, wrangler dev, the tests).
import type { BlobStore } from "./blob-store.ts";
import { DiskBlobStore } from "./disk-blob-store.ts";
import { R2BlobStore } from "./r2-blob-store.ts";

/** The bindings it reads (a subset of the Worker's Env). */
export interface BlobStoreBindings {
  RUNS?: R2Bucket;
  RUNS_DIRECTORY?: Fetcher;
}

export function openBlobStore(env: BlobStoreBindings): BlobStore {
  if (env.RUNS_DIRECTORY) return new DiskBlobStore(env.RUNS_DIRECTORY);
  if (env.RUNS) return new R2BlobStore(env.RUNS);
  throw new Error("No blob store is bound: the Worker needs the RUNS bucket or the RUNS_DIRECTORY disk service.");
}
