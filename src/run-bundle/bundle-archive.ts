// Writing the run bundle's archive, runs/<task_id>/bundle.tar, to the blob store: each file measured first (its size
// goes in its tar header before a byte of it is written), then its bytes read or made a piece at a time when its turn
// comes; the archive assembled and written with one put when small, streamed when large. Which files go in, and the
// table of where each one is, are RunBundle's (run-bundle.ts).
import type { BlobStore } from "../blob-store/blob-store.ts";
import { type TarEntry, tarBytes, tarLayout, tarStream } from "./tar.ts";

/**
 * A file's text made piece by piece when the archive is written (checkpoints.json: a checkpoint a piece), so that it
 * is never held whole. Called once to measure the file and again to write it, and must make the same text both times.
 */
export type TextPieces = () => Iterable<string>;

/** A file of the archive: its size, and its bytes in pieces, read or made when its turn comes. */
export interface ArchiveFile {
  size: number;
  content_type: string;
  created_at: string;
  pieces: () => Iterable<Uint8Array>;
}

/** Text pieces up to this many bytes are kept from measuring to writing; a larger file is made twice instead. */
const KEEP_MEASURED_BYTES = 1024 * 1024;
/** An archive up to this size is assembled and written with one put (a stream's writes cost a short run more). */
const WHOLE_ARCHIVE_BYTES = 8 * 1024 * 1024;
/** A streamed archive is written in chunks of about this size. */
const STREAM_CHUNK_BYTES = 256 * 1024;

/**
 * Writes the archive of `files` to the store at `key`, its files read or made a piece at a time, and returns where
 * each file's bytes are. An archive of up to WHOLE_ARCHIVE_BYTES is assembled and written with one put; a larger one
 * is streamed, its length announced first (each file's size is known), in chunks of STREAM_CHUNK_BYTES. A file
 * whose bytes are not the size it was listed with (a staged file written to meanwhile) fails the write, which the
 * caller tries again, with nothing written.
 */
export async function writeArchive(
  bucket: BlobStore,
  key: string,
  files: readonly (readonly [string, ArchiveFile])[],
  mtimeMs: number,
): Promise<TarEntry[]> {
  const layout = tarLayout(files.map(([path, file]) => ({ path, size: file.size, mtimeMs, pieces: file.pieces })));
  const options = { contentType: "application/x-tar" };
  if (layout.length <= WHOLE_ARCHIVE_BYTES) {
    await bucket.put(key, tarBytes(layout), options);
    return layout.entries;
  }
  const stream = tarStream(layout, STREAM_CHUNK_BYTES);
  // A failed upload stops the writing; a failed file fails the stream, and so the upload, with nothing written.
  const putting = bucket.put(key, stream.readable, options).catch(async (error: unknown) => {
    await stream.abort(error);
    throw error;
  });
  const writing = stream.written;
  const [wrote, put] = await Promise.allSettled([writing, putting]);
  if (wrote.status === "rejected") throw wrote.reason;
  if (put.status === "rejected") throw put.reason;
  return layout.entries;
}

/**
 * A made file's size, from making it once (each piece passed through `clean`, the redactor or nothing); its pieces
 * are kept for the write when it is small, and made again when it is not, so that at most one piece of it is held at
 * a time.
 */
export function measured(make: TextPieces, clean: (text: string) => string): Pick<ArchiveFile, "size" | "pieces"> {
  const scrubbed = function* () {
    for (const piece of make()) yield encode(clean(piece));
  };
  let size = 0;
  let kept: Uint8Array[] | null = [];
  for (const piece of scrubbed()) {
    size += piece.byteLength;
    if (kept && size <= KEEP_MEASURED_BYTES) kept.push(piece);
    else kept = null;
  }
  const pieces = kept;
  return { size, pieces: pieces ? () => pieces : scrubbed };
}

const encoder = new TextEncoder();

export function encode(text: string): Uint8Array {
  return encoder.encode(text);
}
