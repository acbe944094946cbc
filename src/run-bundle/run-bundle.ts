// The run bundle (seed 002 "Run Directory Structure") under runs/<task_id>/ in the blob store (R2, or a directory
// self-hosted). Files produced during the run are staged in the object's SQLite (cheap, synchronous, on the hot path);
// when the run ends, whatever way it ends, they and the end-of-run files are packed into ONE archive,
// runs/<task_id>/bundle.tar (format 2, src/run-bundle/tar.ts; bundle-archive.ts writes it), written with one put: a put
// per file cost a run more than its own model loop. Its files are read or made one after the other as the archive is
// written (assembled when small, streamed when large), so that a long run's bundle, whose checkpoints and requests grow
// with the square of its length, is never held whole in the isolate's 128 MB. A file too large to stage goes to the
// store at once as an object of its own, runs/<task_id>/<path>. The table lists every file with where it is: staged, in
// the archive (at an offset, read back with a ranged read), or an object of its own.
import type { BlobStore } from "../blob-store/blob-store.ts";
import type { EventLog } from "../events/event-log.ts";
import { type ArchiveFile, encode, measured, type TextPieces, writeArchive } from "./bundle-archive.ts";
import { filesEnd } from "./tar.ts";

export interface ArtifactEntry {
  path: string;
  size: number;
  content_type: string;
  created_at: string;
  /** False while the file is staged in the task's object; true once it is in the blob store. */
  uploaded: boolean;
}

/** Where a bundle file's bytes are: staged in the object, or in the blob store (at a range of the archive). */
export type ArtifactLocation =
  | { kind: "staged"; content: string; content_type: string }
  | { kind: "stored"; key: string; content_type: string; range?: { offset: number; length: number } };

/** The bundle's format: 1 was an object per file; 2 is one archive with a manifest (docs/reference/run-bundle.md). */
export const BUNDLE_FORMAT_VERSION = 2;
/** The archive's name under the run's prefix. */
export const BUNDLE_ARCHIVE = "bundle.tar";
/** The manifest, the archive's first file: the format, and every file of the bundle with where it is. */
export const BUNDLE_MANIFEST = "bundle.json";

/**
 * How to send the whole bundle as one tar file: the archive's files (up to `end`, before its end-of-archive blocks),
 * then each file kept as an object of its own as a further entry. A bundle of format 1 has no archive: every file
 * is an entry of its own.
 */
export interface BundleDownload {
  archive: { key: string; end: number } | null;
  separate: { path: string; key: string; size: number }[];
  mtimeMs: number;
}

/** bundle.json. */
export interface BundleManifest {
  format: "outpost.run-bundle";
  version: typeof BUNDLE_FORMAT_VERSION;
  task_id: string;
  created_at: string;
  files: { path: string; size: number; content_type: string; created_at: string; in_archive: boolean }[];
}

/** Files above this are uploaded immediately instead of staged (SQLite rows must stay under 2 MB). */
const STAGE_LIMIT = 512 * 1024;

/** What the bundle is given when the run has ended: seed 002's files, and seed 003's (task.json, trace.json, checkpoints). */
export interface EndOfRun {
  events: Pick<EventLog, "all">;
  summary: string;
  transcript: string;
  files: { path: string; content: string | TextPieces }[];
}

export function runPrefix(taskId: string): string {
  return `runs/${taskId}/`;
}

export function contentTypeFor(path: string): string {
  if (path.endsWith(".jsonl")) return "application/x-ndjson";
  if (path.endsWith(".json")) return "application/json";
  if (path.endsWith(".md")) return "text/markdown; charset=utf-8";
  return "text/plain; charset=utf-8";
}

type Row = {
  path: string;
  content: string | null;
  size: number;
  content_type: string;
  created_at: string;
  uploaded: number;
  archive_offset: number | null;
};

export class RunBundle {
  private flushing: Promise<void> | null = null;

  private readonly sql: SqlStorage;
  private readonly bucket: BlobStore;
  private readonly taskId: () => string;
  /** Removes secrets from everything written (src/events/redaction.ts). */
  private readonly scrub: (text: string) => string;
  /** Runs writes atomically (the object's transactionSync). */
  private readonly atomically: (fn: () => void) => void;

  constructor(
    sql: SqlStorage,
    bucket: BlobStore,
    taskId: () => string,
    scrub: (text: string) => string = (t) => t,
    atomically: (fn: () => void) => void = (fn) => fn(),
  ) {
    this.sql = sql;
    this.bucket = bucket;
    this.taskId = taskId;
    this.scrub = scrub;
    this.atomically = atomically;
  }

  /** Adds or replaces a file of the bundle. */
  async write(path: string, raw: string): Promise<void> {
    const content = this.scrub(raw);
    const size = utf8Length(content);
    const type = contentTypeFor(path);
    const now = new Date().toISOString();
    if (size > STAGE_LIMIT) {
      await this.bucket.put(runPrefix(this.taskId()) + path, content, { contentType: type });
      this.upsert({
        path,
        content: null,
        size,
        content_type: type,
        created_at: now,
        uploaded: 1,
        archive_offset: null,
      });
      return;
    }
    this.upsert({ path, content, size, content_type: type, created_at: now, uploaded: 0, archive_offset: null });
  }

  list(): ArtifactEntry[] {
    return this.sql
      .exec<{ path: string; size: number; content_type: string; created_at: string; uploaded: number }>(
        "SELECT path, size, content_type, created_at, uploaded FROM bundle_files ORDER BY path",
      )
      .toArray()
      .map((r) => ({ ...r, uploaded: r.uploaded === 1 }));
  }

  /** Where a file of the bundle is, or null if the bundle has no such file. */
  location(path: string): ArtifactLocation | null {
    const row = this.sql
      .exec<Pick<Row, "content" | "content_type" | "size" | "archive_offset">>(
        "SELECT content, content_type, size, archive_offset FROM bundle_files WHERE path = ?",
        path,
      )
      .toArray()[0];
    if (!row) return null;
    if (row.content !== null) return { kind: "staged", content: row.content, content_type: row.content_type };
    const prefix = runPrefix(this.taskId());
    if (row.archive_offset === null) return { kind: "stored", key: prefix + path, content_type: row.content_type };
    return {
      kind: "stored",
      key: prefix + BUNDLE_ARCHIVE,
      content_type: row.content_type,
      range: { offset: row.archive_offset, length: row.size },
    };
  }

  /** How to send the uploaded bundle as one tar file (call once the bundle is flushed). */
  download(): BundleDownload {
    const rows = this.sql
      .exec<Pick<Row, "path" | "size" | "created_at" | "archive_offset">>(
        "SELECT path, size, created_at, archive_offset FROM bundle_files WHERE uploaded = 1 ORDER BY path",
      )
      .toArray();
    const prefix = runPrefix(this.taskId());
    const archived = rows.flatMap((row) =>
      row.archive_offset === null ? [] : [{ offset: row.archive_offset, size: row.size }],
    );
    const latest = rows.reduce((at, row) => Math.max(at, Date.parse(row.created_at) || 0), 0);
    return {
      archive: archived.length > 0 ? { key: prefix + BUNDLE_ARCHIVE, end: filesEnd(archived) } : null,
      separate: rows
        .filter((row) => row.archive_offset === null)
        .map((row) => ({ path: row.path, key: prefix + row.path, size: row.size })),
      mtimeMs: latest,
    };
  }

  /**
   * Packs the end-of-run files and everything staged into the archive, writes it, and then, in one transaction,
   * records where each file is and runs `commit` (the task's "bundle flushed" mark). Idempotent: a flush interrupted
   * by an eviction is simply run again, and concurrent calls share one flush.
   */
  flush(final: EndOfRun, commit: () => void = () => {}): Promise<void> {
    this.flushing ??= this.doFlush(final, commit).finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async doFlush(final: EndOfRun, commit: () => void): Promise<void> {
    const prefix = runPrefix(this.taskId());
    // Without the staged contents: each is read when its turn in the archive comes.
    const rows = this.sql
      .exec<Omit<Row, "content"> & { staged: number }>(
        `SELECT path, size, content_type, created_at, uploaded, archive_offset, content IS NOT NULL AS staged
         FROM bundle_files`,
      )
      .toArray();
    const now = new Date().toISOString();
    // The event log's records were redacted as they were written; the rest is scrubbed here.
    const ended: { path: string; pieces: TextPieces; scrub: boolean }[] = [
      { path: "events.jsonl", pieces: () => eventsJsonl(final.events), scrub: false },
      { path: "llm_transcript.log", pieces: () => [final.transcript], scrub: true },
      { path: "final_summary.md", pieces: () => [final.summary], scrub: true },
      ...final.files.map(({ path, content }) => ({
        path,
        pieces: typeof content === "string" ? () => [content] : content,
        scrub: true,
      })),
    ];
    const endedPaths = new Set(ended.map((file) => file.path));
    // A file's place in the archive is where it was first met: an earlier archive's files, then the staged ones,
    // then the end-of-run files, each written afresh in the place it had.
    const files = new Map<string, ArchiveFile | null>();
    // A file an earlier archive holds (a bundle flushed before, then written to again) is carried over from it, read
    // before the new archive replaces it. The manifest is written afresh below, never carried over (it would list
    // itself).
    for (const row of rows) {
      if (row.archive_offset === null || row.path === BUNDLE_MANIFEST) continue;
      if (endedPaths.has(row.path) || row.staged === 1) {
        files.set(row.path, null);
        continue;
      }
      const previous = await this.bucket.get(prefix + BUNDLE_ARCHIVE, {
        range: { offset: row.archive_offset, length: row.size },
      });
      if (!previous || previous.size !== row.size) continue;
      const content = new Uint8Array(await previous.arrayBuffer());
      files.set(row.path, { ...described(row), size: content.byteLength, pieces: () => [content] });
    }
    for (const row of rows) {
      if (row.staged === 1) files.set(row.path, { ...described(row), pieces: () => this.staged(row.path) });
    }
    for (const file of ended) {
      const type = contentTypeFor(file.path);
      const clean = file.scrub ? (text: string) => this.scrub(text) : (text: string) => text;
      files.set(file.path, { ...measured(file.pieces, clean), content_type: type, created_at: now });
    }
    const archived = [...files].flatMap(([path, file]) => (file ? [[path, file] as const] : []));
    const separate = rows.filter((row) => row.archive_offset === null && row.staged === 0 && !files.has(row.path));
    const manifest: BundleManifest = {
      format: "outpost.run-bundle",
      version: BUNDLE_FORMAT_VERSION,
      task_id: this.taskId(),
      created_at: now,
      files: [
        ...archived.map(([path, file]) => ({
          path,
          size: file.size,
          content_type: file.content_type,
          created_at: file.created_at,
          in_archive: true,
        })),
        ...separate.map((row) => ({
          path: row.path,
          size: row.size,
          content_type: row.content_type,
          created_at: row.created_at,
          in_archive: false,
        })),
      ].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0)),
    };
    const manifestBytes = encode(`${JSON.stringify(manifest, null, 2)}\n`);
    // The manifest first, so a reader of the archive knows what it holds before anything else.
    const ordered: (readonly [string, ArchiveFile])[] = [
      [
        BUNDLE_MANIFEST,
        {
          size: manifestBytes.byteLength,
          content_type: contentTypeFor(BUNDLE_MANIFEST),
          created_at: now,
          pieces: () => [manifestBytes],
        },
      ],
      ...archived,
    ];
    const entries = await writeArchive(this.bucket, prefix + BUNDLE_ARCHIVE, ordered, Date.parse(now));
    const placed = entries.flatMap((entry, i) => {
      const file = ordered[i]?.[1];
      if (!file) return [];
      const { content_type, created_at } = file;
      return [{ path: entry.path, size: entry.size, content_type, created_at, offset: entry.offset }];
    });
    this.atomically(() => {
      // Every file's place in one statement, whatever the number of files.
      this.sql.exec(
        `INSERT INTO bundle_files (path, content, size, content_type, created_at, uploaded, archive_offset)
         SELECT value ->> 'path', NULL, value ->> 'size', value ->> 'content_type', value ->> 'created_at', 1,
           value ->> 'offset'
         FROM json_each(?) WHERE true
         ON CONFLICT(path) DO UPDATE SET content = NULL, size = excluded.size, uploaded = 1,
           archive_offset = excluded.archive_offset`,
        JSON.stringify(placed),
      );
      commit();
    });
  }

  /** A staged file's bytes, read from its row when the archive reaches it. */
  private *staged(path: string): Iterable<Uint8Array> {
    const row = this.sql
      .exec<{ content: string | null }>("SELECT content FROM bundle_files WHERE path = ?", path)
      .toArray()[0];
    if (row?.content === null || row?.content === undefined) {
      throw new Error(`The run bundle's ${path} is no longer staged.`);
    }
    yield encode(row.content);
  }

  private upsert(row: Row) {
    this.sql.exec(
      `INSERT INTO bundle_files (path, content, size, content_type, created_at, uploaded, archive_offset)
       VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(path) DO UPDATE SET content = excluded.content, size = excluded.size, uploaded = excluded.uploaded,
         archive_offset = excluded.archive_offset`,
      row.path,
      row.content,
      row.size,
      row.content_type,
      row.created_at,
      row.uploaded,
      row.archive_offset,
    );
  }
}

function utf8Length(text: string): number {
  return encode(text).byteLength;
}

/** events.jsonl, a record a piece. */
function* eventsJsonl(events: Pick<EventLog, "all">): Iterable<string> {
  for (const record of events.all()) yield `${JSON.stringify(record)}\n`;
}

/** What the manifest and the table say of a file, from its row. */
function described(row: Pick<Row, "size" | "content_type" | "created_at">): Omit<ArchiveFile, "pieces"> {
  return { size: row.size, content_type: row.content_type, created_at: row.created_at };
}
