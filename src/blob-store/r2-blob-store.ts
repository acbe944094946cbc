// The blob store on Cloudflare: an R2 bucket (the RUNS binding), with nothing added.
import type { BlobListing, BlobRange, BlobStore, BlobValue, StoredBlob } from "./blob-store.ts";

export class R2BlobStore implements BlobStore {
  private readonly bucket: R2Bucket;

  constructor(bucket: R2Bucket) {
    this.bucket = bucket;
  }

  async get(key: string, options?: { range?: BlobRange }): Promise<StoredBlob | null> {
    const range = options?.range;
    const object = await this.bucket.get(key, range ? { range } : {});
    if (!object) return null;
    // A ranged object's size is the whole object's; the range's is what its body holds.
    const size = range ? Math.max(0, Math.min(range.length, object.size - range.offset)) : object.size;
    return {
      size,
      body: object.body,
      text: () => object.text(),
      arrayBuffer: () => object.arrayBuffer(),
      httpEtag: object.httpEtag,
    };
  }

  async put(key: string, value: BlobValue, options?: { contentType?: string }) {
    await this.bucket.put(
      key,
      value,
      options?.contentType ? { httpMetadata: { contentType: options.contentType } } : {},
    );
  }

  async list(options: { prefix: string; cursor?: string }): Promise<BlobListing> {
    const page = await this.bucket.list({
      prefix: options.prefix,
      ...(options.cursor ? { cursor: options.cursor } : {}),
    });
    const objects = page.objects.map((o) => ({ key: o.key, size: o.size }));
    return page.truncated ? { objects, truncated: true, cursor: page.cursor } : { objects, truncated: false };
  }

  async delete(keys: string | readonly string[]): Promise<void> {
    await this.bucket.delete(typeof keys === "string" ? keys : [...keys]);
  }
}
