// The run bundle (seed 002 "Run Directory Structure") at runs/<task_id>/ in R2. Files produced during the run are
// staged in the object's SQLite (cheap, synchronous, on the hot path) and uploaded when the run ends, whatever
// way it ends; a file too large to stage goes to R2 at once. The table lists every file, staged or uploaded.
import type { BlobStore } from "../blob-store/blob-store.ts";
import type { EventLog } from "../events/event-log.ts";

export interface ArtifactEntry {
  path: string;
  size: number;
  content_type: string;
  created_at: string;
  /** False while the file is staged in the task's object; true once it is in R2. */
  uploaded: boolean;
}

/** Files above this are uploaded immediately instead of staged (SQLite rows must stay under 2 MB). */
const STAGE_LIMIT = 512 * 1024;

const UPLOAD_CONCURRENCY = 4;

/** What the bundle is given when the run has ended: seed 002's files, and seed 003's (task.json, trace.json, checkpoints). */
export interface EndOfRun {
  events: EventLog;
  summary: string;
  transcript: string;
  files: { path: string; content: string }[];
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

export class RunBundle {
  private flushing: Promise<void> | null = null;

  private readonly sql: SqlStorage;
  private readonly bucket: BlobStore;
  private readonly taskId: () => string;
  /** Removes secrets from everything written (src/events/redaction.ts). */
  private readonly scrub: (text: string) => string;

  constructor(sql: SqlStorage, bucket: BlobStore, taskId: () => string, scrub: (text: string) => string = (t) => t) {
    this.sql = sql;
    this.bucket = bucket;
    this.taskId = taskId;
    this.scrub = scrub;
  }

  /** Adds or replaces a file of the bundle. */
  async write(path: string, raw: string): Promise<void> {
    const content = this.scrub(raw);
    const size = new TextEncoder().encode(content).byteLength;
    const type = contentTypeFor(path);
    const now = new Date().toISOString();
    if (size > STAGE_LIMIT) {
      await this.bucket.put(runPrefix(this.taskId()) + path, content, { contentType: type });
      this.upsert(path, null, size, type, now, true);
      return;
    }
    this.upsert(path, content, size, type, now, false);
  }

  list(): ArtifactEntry[] {
    return this.sql
      .exec<{ path: string; size: number; content_type: string; created_at: string; uploaded: number }>(
        "SELECT path, size, content_type, created_at, uploaded FROM bundle_files ORDER BY path",
      )
      .toArray()
      .map((r) => ({ ...r, uploaded: r.uploaded === 1 }));
  }

  /** A staged file's content, or null if it is not staged (then it is in R2, or does not exist). */
  staged(path: string): { content: string; content_type: string } | null {
    const row = this.sql
      .exec<{ content: string | null; content_type: string }>(
        "SELECT content, content_type FROM bundle_files WHERE path = ?",
        path,
      )
      .toArray()[0];
    return row && row.content !== null ? { content: row.content, content_type: row.content_type } : null;
  }

  /** A file's content type as written, or null if the bundle has no such file. */
  contentType(path: string): string | null {
    const row = this.sql
      .exec<{ content_type: string }>("SELECT content_type FROM bundle_files WHERE path = ?", path)
      .toArray()[0];
    return row?.content_type ?? null;
  }

  /**
   * Writes the end-of-run files and uploads everything staged. Idempotent: a flush interrupted by an eviction is
   * simply run again, and concurrent calls share one flush.
   */
  flush(final: EndOfRun): Promise<void> {
    this.flushing ??= this.doFlush(final).finally(() => {
      this.flushing = null;
    });
    return this.flushing;
  }

  private async doFlush(final: EndOfRun): Promise<void> {
    const prefix = runPrefix(this.taskId());
    const staged = this.sql
      .exec<{ path: string; content: string; content_type: string }>(
        "SELECT path, content, content_type FROM bundle_files WHERE uploaded = 0",
      )
      .toArray();
    // The end-of-run files go straight to R2; the staged ones follow. A few uploads at a time: an invocation may
    // hold at most 6 connections open.
    const files = [
      { path: "events.jsonl", content: eventsJsonl(final.events), content_type: contentTypeFor("events.jsonl") },
      {
        path: "llm_transcript.log",
        content: this.scrub(final.transcript),
        content_type: contentTypeFor("llm_transcript.log"),
      },
      {
        path: "final_summary.md",
        content: this.scrub(final.summary),
        content_type: contentTypeFor("final_summary.md"),
      },
      ...final.files.map((file) => ({
        path: file.path,
        content: this.scrub(file.content),
        content_type: contentTypeFor(file.path),
      })),
    ];
    const ended = files.length;
    files.push(...staged);
    for (let i = 0; i < files.length; i += UPLOAD_CONCURRENCY) {
      await Promise.all(
        files
          .slice(i, i + UPLOAD_CONCURRENCY)
          .map((file) => this.bucket.put(prefix + file.path, file.content, { contentType: file.content_type })),
      );
    }
    const now = new Date().toISOString();
    for (const file of files.slice(0, ended)) {
      this.upsert(file.path, null, new TextEncoder().encode(file.content).byteLength, file.content_type, now, true);
    }
    for (const file of staged) {
      this.sql.exec("UPDATE bundle_files SET content = NULL, uploaded = 1 WHERE path = ?", file.path);
    }
  }

  private upsert(path: string, content: string | null, size: number, type: string, now: string, uploaded: boolean) {
    this.sql.exec(
      `INSERT INTO bundle_files (path, content, size, content_type, created_at, uploaded) VALUES (?, ?, ?, ?, ?, ?)
       ON CONFLICT(path) DO UPDATE SET content = excluded.content, size = excluded.size, uploaded = excluded.uploaded`,
      path,
      content,
      size,
      type,
      now,
      uploaded ? 1 : 0,
    );
  }
}

function eventsJsonl(events: EventLog): string {
  let out = "";
  for (const record of events.all()) out += `${JSON.stringify(record)}\n`;
  return out;
}
