// The run bundle's archive format: POSIX ustar (IEEE Std 1003.1-2001, "pax" interchange format), so the file a
// user downloads opens with `tar -xf` anywhere. Written here rather than taken from a library: the small tar
// libraries that run in workerd truncate names over 100 bytes and copy contents a byte at a time, and the bundle
// needs each file's offset in the archive, to read one file back with a ranged read instead of the whole archive.
//
// Each file is a 512-byte header then its bytes, padded to a 512-byte boundary; the archive ends with two zero
// blocks. A path that does not fit ustar's name (100 bytes) and prefix (155 bytes) fields is carried by a pax
// extended header (typeflag "x") with a `path` record before the file's own header.
//
// An archive is laid out before a byte of it is read (tarLayout: every file's size is known first, so its length and
// each file's offset are too), then written a piece at a time, assembled (tarBytes) or as a stream (tarStream).

import { ApiError } from "../errors.ts";

const BLOCK = 512;
/** The two zero blocks that end an archive. */
export const END_OF_ARCHIVE = 2 * BLOCK;
const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** A file to put in an archive: a `/`-separated relative path, its bytes, and its modification time (ms). */
export interface TarInput {
  path: string;
  content: Uint8Array;
  mtimeMs: number;
}

/** Where a file's bytes are in an archive. */
export interface TarEntry {
  path: string;
  /** The offset of the file's first byte (after its header) from the archive's start. */
  offset: number;
  size: number;
}

/** A file to write into an archive a piece at a time: its size, known first, and its bytes as they are read or made. */
export interface TarSource {
  path: string;
  size: number;
  mtimeMs: number;
  pieces: () => Iterable<Uint8Array>;
}

/** An archive laid out before it is written: its length, where each file's bytes are, and its bytes in order. */
export interface TarLayout {
  length: number;
  entries: TarEntry[];
  /**
   * The archive's bytes: each file's header, its pieces, its padding, then the end-of-archive blocks. A file whose
   * pieces are not the size it was given with throws, so that no archive with wrong offsets is ever written.
   */
  chunks: () => Iterable<Uint8Array>;
}

/** Lays out an archive of `files`, in the order given, without reading any of them. */
export function tarLayout(files: readonly TarSource[]): TarLayout {
  const framed = files.map((file) => ({ file, framing: entryFraming(file.path, file.size, file.mtimeMs) }));
  const entries: TarEntry[] = [];
  let at = 0;
  for (const { file, framing } of framed) {
    at += framing.header.byteLength;
    entries.push({ path: file.path, offset: at, size: file.size });
    at += file.size + framing.padding;
  }
  return {
    length: at + END_OF_ARCHIVE,
    entries,
    chunks: function* () {
      for (const { file, framing } of framed) {
        yield framing.header;
        let written = 0;
        for (const piece of file.pieces()) {
          written += piece.byteLength;
          if (written > file.size) break;
          yield piece;
        }
        if (written !== file.size) {
          throw new Error(
            `The archive's ${file.path} has ${written} bytes instead of the ${file.size} it was listed with.`,
          );
        }
        if (framing.padding > 0) yield new Uint8Array(framing.padding);
      }
      yield new Uint8Array(END_OF_ARCHIVE);
    },
  };
}

/** The laid-out archive's bytes, assembled in one array. */
export function tarBytes(layout: TarLayout): Uint8Array {
  const archive = new Uint8Array(layout.length);
  let at = 0;
  for (const chunk of layout.chunks()) {
    archive.set(chunk, at);
    at += chunk.byteLength;
  }
  return archive;
}

/**
 * The laid-out archive as a stream of its announced length (a FixedLengthStream, which R2 takes), written in chunks
 * of about `chunkBytes` as it is read. A file that fails (or is not its size) errors the stream and `written`;
 * `abort` stops the writing when the reader has failed.
 */
export function tarStream(
  layout: TarLayout,
  chunkBytes: number,
): { readable: ReadableStream<Uint8Array>; written: Promise<void>; abort(reason: unknown): Promise<void> } {
  const { readable, writable } = new FixedLengthStream(layout.length);
  const writer = writable.getWriter();
  const write = async () => {
    for (const chunk of coalesced(layout.chunks(), chunkBytes)) await writer.write(chunk);
    await writer.close();
  };
  const written = write().catch(async (error: unknown) => {
    await writer.abort(error).catch(() => {});
    throw error;
  });
  return { readable, written, abort: (reason) => writer.abort(reason).catch(() => {}) };
}

/** `chunks` regrouped into chunks of about `size` bytes: small ones joined, large ones passed on as they are. */
function* coalesced(chunks: Iterable<Uint8Array>, size: number): Iterable<Uint8Array> {
  let held: Uint8Array[] = [];
  let bytes = 0;
  const join = () => {
    const out = new Uint8Array(bytes);
    let at = 0;
    for (const chunk of held) {
      out.set(chunk, at);
      at += chunk.byteLength;
    }
    held = [];
    bytes = 0;
    return out;
  };
  for (const chunk of chunks) {
    if (chunk.byteLength >= size) {
      if (bytes > 0) yield join();
      yield chunk;
      continue;
    }
    held.push(chunk);
    bytes += chunk.byteLength;
    if (bytes >= size) yield join();
  }
  if (bytes > 0) yield join();
}

/** The archive's bytes and where each file's content starts, in the order given. */
export function packTar(files: readonly TarInput[]): { archive: Uint8Array; entries: TarEntry[] } {
  const layout = tarLayout(
    files.map((file) => ({ ...file, size: file.content.byteLength, pieces: () => [file.content] })),
  );
  return { archive: tarBytes(layout), entries: layout.entries };
}

/**
 * The regular files of an archive, with their offsets: one packTar wrote, a downloaded bundle, or what another tar
 * (GNU tar, bsdtar) made of it: ustar and v7 headers, pax `path` records, GNU long names (typeflag "L"); other
 * entries (folders, links, pax globals) are skipped, and a later file of a path replaces an earlier one for readers
 * that keep the last. Every field is bounds-checked against the archive: anything that is not a well-formed
 * archive is a 400 invalid_bundle naming the body, never another exception (the bytes come from a client).
 */
export function readTar(archive: Uint8Array): TarEntry[] {
  if (archive.byteLength < BLOCK) throw malformed("it is shorter than one 512-byte tar header");
  const entries: TarEntry[] = [];
  let at = 0;
  let longPath: string | null = null;
  // An archive without its end-of-archive blocks is read to its last file, as GNU tar and bsdtar do.
  while (at < archive.byteLength) {
    if (at + BLOCK > archive.byteLength) throw malformed(`it ends inside the header at byte ${at}`);
    const header = archive.subarray(at, at + BLOCK);
    if (header.every((byte) => byte === 0)) break;
    const stored = readOctal(header, 148, 8);
    if (stored === null || !checksums(header).includes(stored)) {
      throw malformed(at === 0 ? "it is not a tar archive (no valid header)" : `bad header checksum at byte ${at}`);
    }
    const size = readOctal(header, 124, 12);
    if (size === null) throw malformed(`the header at byte ${at} has no octal size`);
    const content = at + BLOCK;
    if (content + size > archive.byteLength) {
      throw malformed(`it is cut short: the entry at byte ${at} declares ${size} bytes`);
    }
    const type = String.fromCharCode(header[156] ?? 0);
    const body = archive.subarray(content, content + size);
    if (type === "x") {
      longPath = paxRecords(body).get("path") ?? longPath;
    } else if (type === "L") {
      longPath = readString(body, 0, body.byteLength);
    } else if (type === "g") {
      // A pax global header: no record of it names a file.
    } else {
      if (type === "0" || type === "\0" || type === "7") {
        const prefix = readString(header, 345, 155);
        const name = readString(header, 0, 100);
        entries.push({ path: longPath ?? (prefix ? `${prefix}/${name}` : name), offset: content, size });
      }
      longPath = null;
    }
    at = content + padded(size);
  }
  return entries;
}

/** The archive's files by path (the last of a path wins), each a view of the archive's bytes. */
export function tarFiles(archive: Uint8Array): Map<string, Uint8Array> {
  const files = new Map<string, Uint8Array>();
  for (const entry of readTar(archive)) {
    files.set(entry.path, archive.subarray(entry.offset, entry.offset + entry.size));
  }
  return files;
}

function malformed(why: string): ApiError {
  return new ApiError("invalid_bundle", `The body is not a readable tar archive: ${why}.`, "body");
}

/**
 * What one file takes in an archive besides its bytes: its header blocks before them, and the zero padding after
 * them. For writing an archive a piece at a time (a file streamed from elsewhere).
 */
export function entryFraming(path: string, size: number, mtimeMs: number): { header: Uint8Array; padding: number } {
  return { header: headerBlocks({ path, size, mtimeMs }), padding: padded(size) - size };
}

/** Where an archive's files end: after the last file's padding, before the end-of-archive blocks. */
export function filesEnd(entries: readonly Pick<TarEntry, "offset" | "size">[]): number {
  return entries.reduce((end, entry) => Math.max(end, entry.offset + padded(entry.size)), 0);
}

/** The header block(s) of one file: a pax header for a path ustar cannot hold, then the ustar header. */
function headerBlocks(file: { path: string; size: number; mtimeMs: number }): Uint8Array {
  const path = encoder.encode(file.path);
  const split = splitPath(file.path);
  const mtime = Math.floor(file.mtimeMs / 1000);
  const ustar = header(split?.name ?? asciiName(file.path), split?.prefix ?? "", file.size, mtime, "0");
  if (split) return ustar;
  const record = paxRecord("path", path);
  const pax = header(`PaxHeader/${asciiName(file.path)}`, "", record.byteLength, mtime, "x");
  const out = new Uint8Array(BLOCK + padded(record.byteLength) + BLOCK);
  out.set(pax, 0);
  out.set(record, BLOCK);
  out.set(ustar, BLOCK + padded(record.byteLength));
  return out;
}

function header(name: string, prefix: string, size: number, mtime: number, type: string): Uint8Array {
  const block = new Uint8Array(BLOCK);
  writeString(block, 0, 100, name);
  writeString(block, 100, 8, "0000644");
  writeString(block, 108, 8, "0000000");
  writeString(block, 116, 8, "0000000");
  writeString(block, 124, 12, size.toString(8).padStart(11, "0"));
  writeString(block, 136, 12, mtime.toString(8).padStart(11, "0"));
  writeString(block, 148, 8, "        ");
  writeString(block, 156, 1, type);
  writeString(block, 257, 6, "ustar");
  writeString(block, 263, 2, "00");
  writeString(block, 345, 155, prefix);
  writeString(block, 148, 8, `${checksum(block).toString(8).padStart(6, "0")}\0 `);
  return block;
}

/** ustar's name and prefix for a path, split at a `/`; null when the path fits neither way. */
function splitPath(path: string): { name: string; prefix: string } | null {
  const bytes = encoder.encode(path);
  if (bytes.byteLength <= 100) return { name: path, prefix: "" };
  for (let i = path.indexOf("/"); i !== -1; i = path.indexOf("/", i + 1)) {
    const prefix = path.slice(0, i);
    const name = path.slice(i + 1);
    if (encoder.encode(prefix).byteLength <= 155 && encoder.encode(name).byteLength <= 100 && name !== "") {
      return { name, prefix };
    }
  }
  return null;
}

/** A stand-in name for a path a pax record carries: readers that know pax never show it. */
function asciiName(path: string): string {
  return path.replace(/[^\x20-\x7e]/g, "_").slice(-90);
}

/** One pax record, "<length> <key>=<value>\n", where the length counts the whole record with its own digits. */
function paxRecord(key: string, value: Uint8Array): Uint8Array {
  const body = encoder.encode(` ${key}=`).byteLength + value.byteLength + 1;
  let length = body + String(body).length;
  if (String(length).length !== String(length - body).length) length = body + String(length).length;
  const record = new Uint8Array(length);
  const head = encoder.encode(`${length} ${key}=`);
  record.set(head, 0);
  record.set(value, head.byteLength);
  record[length - 1] = 0x0a;
  return record;
}

function paxRecords(bytes: Uint8Array): Map<string, string> {
  const records = new Map<string, string>();
  let at = 0;
  while (at < bytes.byteLength) {
    const space = bytes.indexOf(0x20, at);
    if (space === -1) break;
    const length = Number(decoder.decode(bytes.subarray(at, space)));
    if (!Number.isInteger(length) || length <= 0) break;
    const record = decoder.decode(bytes.subarray(space + 1, at + length - 1));
    const eq = record.indexOf("=");
    if (eq > 0) records.set(record.slice(0, eq), record.slice(eq + 1));
    at += length;
  }
  return records;
}

function padded(size: number): number {
  return Math.ceil(size / BLOCK) * BLOCK;
}

function checksum(block: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < BLOCK; i++) sum += i >= 148 && i < 156 ? 0x20 : (block[i] ?? 0);
  return sum;
}

/** The sums a header's checksum may hold: POSIX's (bytes unsigned), and the signed one some old tars wrote. */
function checksums(block: Uint8Array): [number, number] {
  let signed = 0;
  for (let i = 0; i < BLOCK; i++) {
    const byte = i >= 148 && i < 156 ? 0x20 : (block[i] ?? 0);
    signed += byte > 0x7f ? byte - 0x100 : byte;
  }
  return [checksum(block), signed];
}

function writeString(block: Uint8Array, at: number, length: number, value: string): void {
  encoder.encodeInto(value, block.subarray(at, at + length));
}

function readString(block: Uint8Array, at: number, length: number): string {
  const field = block.subarray(at, at + length);
  const end = field.indexOf(0);
  return decoder.decode(end === -1 ? field : field.subarray(0, end));
}

/** An octal field (NUL- or space-terminated, blank for 0), or null when it is not octal (GNU's base-256 included). */
function readOctal(block: Uint8Array, at: number, length: number): number | null {
  const text = readString(block, at, length).trim();
  if (!/^[0-7]*$/.test(text)) return null;
  return text === "" ? 0 : Number.parseInt(text, 8);
}
