// The one storage interface for what does not belong in a Durable Object's SQLite: run bundles, spilled journal
// steps, large workspace files and uploaded skills. On Cloudflare it is R2 (r2-blob-store.ts); self-hosted on one
// machine it is a directory on disk behind workerd's disk service (disk-blob-store.ts). openBlobStore
// (open-blob-store.ts) picks one from the Worker's bindings, once; nothing else in the code knows which.
// The interface has exactly the operations the code uses.

/** An object read back: its bytes once (`body`, `text()` or `arrayBuffer()`), and its size. */
export interface StoredBlob {
  readonly size: number;
  readonly body: ReadableStream<Uint8Array>;
  text(): Promise<string>;
  arrayBuffer(): Promise<ArrayBuffer>;
  /** The store's HTTP entity tag, where it keeps one (R2 does, the disk store does not). */
  readonly httpEtag: string | undefined;
}

/** What an object is written from. */
export type BlobValue = string | ArrayBuffer | Uint8Array | ReadableStream<Uint8Array>;

/** One page of a listing, in key order. */
export interface BlobListing {
  objects: { key: string; size: number }[];
  /** More keys follow: ask again with `cursor`. */
  truncated: boolean;
  cursor?: string;
}

/** A byte range of an object: `length` bytes from `offset`. */
export interface BlobRange {
  offset: number;
  length: number;
}

export interface BlobStore {
  /**
   * The object at `key`, or null if there is none. With `range`, only those bytes (`size` is then the range's
   * length); a range past the object's end is cut at its end.
   */
  get(key: string, options?: { range?: BlobRange }): Promise<StoredBlob | null>;
  /**
   * Writes (or replaces) the object at `key`. `contentType` is kept where the store keeps metadata (R2) for those
   * who browse it; readers take the type from their own records, never from the store. A stream is written as it is
   * read, never held whole, and must announce its length (a FixedLengthStream's readable side): R2 takes no stream
   * of unknown length.
   */
  put(key: string, value: BlobValue, options?: { contentType?: string }): Promise<void>;
  /** The keys under `prefix`, a page at a time (`cursor` from the page before). */
  list(options: { prefix: string; cursor?: string }): Promise<BlobListing>;
  /** Removes these objects; keys that do not exist are ignored. */
  delete(keys: string | readonly string[]): Promise<void>;
}
