// The blob store self-hosted: a directory on the machine's disk, reached through workerd's `disk` service (the
// RUNS_DIRECTORY binding of `npm start`'s config, scripts/self-host/). That service speaks plain HTTP: GET of a file
// returns its bytes with Content-Length, GET of a directory lists it as JSON ([{"name","type"}]), PUT writes a file
// atomically (parent directories created as needed), DELETE removes one, 404 for what is not there. A key is a path
// under the directory, one folder per `/`. The service keeps no metadata, so a put's content type is not kept.
import type { BlobListing, BlobRange, BlobStore, BlobValue, StoredBlob } from "./blob-store.ts";

/** Keys per page of list(), as R2 pages them. */
const LIST_PAGE = 1000;
/** Requests in flight at once (a deletion or a listing's sizes): an invocation may hold at most 6 connections. */
const CONCURRENCY = 4;
/** Only the path of these URLs matters: the binding routes every request to the directory. */
const ORIGIN = "http://blob-store";

/** An entry of the disk service's directory listing. */
interface DirectoryEntry {
  name: string;
  type: string;
}

export class DiskBlobStore implements BlobStore {
  private readonly directory: Pick<Fetcher, "fetch">;

  constructor(directory: Pick<Fetcher, "fetch">) {
    this.directory = directory;
  }

  async get(key: string, options?: { range?: BlobRange }): Promise<StoredBlob | null> {
    const range = options?.range;
    const res = await this.directory.fetch(
      fileUrl(key),
      range ? { headers: { range: `bytes=${range.offset}-${range.offset + range.length - 1}` } } : {},
    );
    if (res.status === 404) return null;
    if (!res.ok) throw await storeError("read", key, res);
    const length = res.headers.get("content-length");
    if (length === null || !res.body) {
      // A directory (listed as JSON, with no length) is not an object.
      await res.body?.cancel();
      return null;
    }
    const body = res.body;
    return {
      size: Number(length),
      body,
      // Decoded here: the service labels every file application/octet-stream, and workerd warns on text() of that.
      text: async () => new TextDecoder().decode(await res.arrayBuffer()),
      arrayBuffer: () => res.arrayBuffer(),
      httpEtag: undefined,
    };
  }

  async put(key: string, value: BlobValue): Promise<void> {
    const res = await this.directory.fetch(fileUrl(key), { method: "PUT", body: value });
    await res.body?.cancel();
    if (!res.ok) throw await storeError("write", key, res);
  }

  async list(options: { prefix: string; cursor?: string }): Promise<BlobListing> {
    const slash = options.prefix.lastIndexOf("/") + 1;
    const folder = options.prefix.slice(0, slash);
    const keys = (await this.walk(folder, options.prefix.slice(slash))).sort();
    const after = options.cursor;
    const rest = after === undefined ? keys : keys.filter((key) => key > after);
    const page = rest.slice(0, LIST_PAGE);
    const objects = await inBatches(page, async (key) => ({ key, size: await this.size(key) }));
    const last = page.at(-1);
    return rest.length > page.length && last !== undefined
      ? { objects, truncated: true, cursor: last }
      : { objects, truncated: false };
  }

  async delete(keys: string | readonly string[]): Promise<void> {
    await inBatches(typeof keys === "string" ? [keys] : keys, async (key) => {
      const res = await this.directory.fetch(fileUrl(key), { method: "DELETE" });
      await res.body?.cancel();
      if (!res.ok && res.status !== 404) throw await storeError("delete", key, res);
    });
  }

  /** Every file key below `folder` whose name there starts with `namePrefix` (folders are walked whole). */
  private async walk(folder: string, namePrefix = ""): Promise<string[]> {
    const res = await this.directory.fetch(folderUrl(folder));
    if (res.status === 404) return [];
    if (!res.ok) throw await storeError("list", folder, res);
    const entries = (await res.json()) as DirectoryEntry[];
    const nested = await Promise.all(
      entries
        .filter((entry) => entry.name.startsWith(namePrefix))
        .map((entry) => {
          if (entry.type === "directory") return this.walk(`${folder}${entry.name}/`);
          return Promise.resolve(entry.type === "file" ? [`${folder}${entry.name}`] : []);
        }),
    );
    return nested.flat();
  }

  private async size(key: string): Promise<number> {
    const res = await this.directory.fetch(fileUrl(key), { method: "HEAD" });
    if (!res.ok) throw await storeError("list", key, res);
    return Number(res.headers.get("content-length") ?? "0");
  }
}

/** The URL of a key: each `/`-separated part encoded. Parts a path cannot hold ("", ".", "..") are refused. */
function fileUrl(key: string): string {
  const parts = key.split("/");
  if (parts.some((part) => part === "" || part === "." || part === "..")) {
    throw new Error(`The disk blob store cannot hold the key ${JSON.stringify(key)} (an empty, "." or ".." part).`);
  }
  return `${ORIGIN}/${parts.map(encodeURIComponent).join("/")}`;
}

/** The URL of a folder ("" for the root, else a path ending in "/"). */
function folderUrl(folder: string): string {
  return folder === "" ? `${ORIGIN}/` : `${fileUrl(folder.slice(0, -1))}/`;
}

async function storeError(what: string, key: string, res: Response): Promise<Error> {
  await res.body?.cancel();
  return new Error(`The disk blob store could not ${what} ${JSON.stringify(key)}: HTTP ${res.status}.`);
}

/** `run` over `items`, CONCURRENCY at a time, results in order. */
async function inBatches<T, R>(items: readonly T[], run: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += CONCURRENCY) {
    out.push(...(await Promise.all(items.slice(i, i + CONCURRENCY).map(run))));
  }
  return out;
}
