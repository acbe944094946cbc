// The whole run bundle as one tar file (GET /v1/tasks/:id/bundle): the archive's files as they are stored, then each
// file kept as an object of its own (too large to stage, or every file of a format 1 bundle) as a further entry,
// then the end-of-archive blocks. Streamed from the blob store piece by piece, never held whole in memory, with its
// length known before the first byte.
import type { BlobStore } from "../blob-store/blob-store.ts";
import type { BundleDownload } from "./run-bundle.ts";
import { END_OF_ARCHIVE, entryFraming } from "./tar.ts";

/** The tar file's bytes as a stream, and how many there are. */
export function bundleTar(store: BlobStore, download: BundleDownload): { body: ReadableStream; length: number } {
  const separate = download.separate.map((file) => ({
    ...file,
    framing: entryFraming(file.path, file.size, download.mtimeMs),
  }));
  const length =
    (download.archive?.end ?? 0) +
    separate.reduce((sum, file) => sum + file.framing.header.byteLength + file.size + file.framing.padding, 0) +
    END_OF_ARCHIVE;
  const { readable, writable } = new FixedLengthStream(length);
  const writer = writable.getWriter();
  const copy = async (key: string, range?: { offset: number; length: number }) => {
    const object = await store.get(key, range ? { range } : {});
    if (!object) throw new Error(`The run bundle's ${JSON.stringify(key)} is missing from the blob store.`);
    for await (const chunk of object.body) await writer.write(chunk);
  };
  const write = async () => {
    if (download.archive && download.archive.end > 0) {
      await copy(download.archive.key, { offset: 0, length: download.archive.end });
    }
    for (const file of separate) {
      await writer.write(file.framing.header);
      await copy(file.key);
      if (file.framing.padding > 0) await writer.write(new Uint8Array(file.framing.padding));
    }
    await writer.write(new Uint8Array(END_OF_ARCHIVE));
    await writer.close();
  };
  // A failure mid-way cuts the stream short of its announced length: the client sees a broken download, not a
  // shorter archive that looks whole.
  write().catch((error: unknown) => writer.abort(error).catch(() => {}));
  return { body: readable, length };
}
