// The end of a task (seed 003 retention): once its retention has run out, its R2 objects go, then all of its storage,
// and a tombstone row is all that is left of it, so that requests get 410 task_expired rather than 404 and a reused
// idempotency key or webhook delivery id can never start a task in the object again.
//
// The tombstone is not part of the versioned schema (src/storage/migrations.ts): an expired object holds no schema
// and never migrates again, and every version of the code reads its tombstone, so its name and shape never change.

import type { BlobStore } from "../blob-store/blob-store.ts";

/** The one table an expired object keeps. */
const TOMBSTONE = "tombstone";

export interface Tombstone {
  task_id: string;
  expired_at: string;
}

/** Whether the object held a task that has expired. */
export function hasTombstone(sql: SqlStorage): boolean {
  return sql.exec("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", TOMBSTONE).toArray().length > 0;
}

/** When the object's task expired, or null if it holds no tombstone. */
export function readTombstone(sql: SqlStorage): Tombstone | null {
  if (!hasTombstone(sql)) return null;
  return (
    sql.exec<{ task_id: string; expired_at: string }>(`SELECT task_id, expired_at FROM ${TOMBSTONE}`).toArray()[0] ??
    null
  );
}

/**
 * Deletes the task's R2 objects under `prefixes` (run bundle, journal spills, workspace files), then all of its
 * storage but a tombstone, then its alarm. `forget` runs once the storage is gone: the object drops what it remembers
 * of it. Safe to repeat.
 */
export async function expireTask(deps: {
  taskId: string;
  bucket: BlobStore;
  prefixes: readonly string[];
  storage: Pick<DurableObjectStorage, "sql" | "transactionSync" | "deleteAlarm">;
  forget: () => void;
}): Promise<void> {
  const { bucket, storage } = deps;
  for (const prefix of deps.prefixes) {
    let cursor: string | undefined;
    do {
      const page = await bucket.list({ prefix, ...(cursor ? { cursor } : {}) });
      if (page.objects.length > 0) await bucket.delete(page.objects.map((o) => o.key));
      cursor = page.truncated ? page.cursor : undefined;
    } while (cursor);
  }
  // The tombstone and the removal of every table commit together: no moment leaves an empty object, which would
  // answer 404 instead of 410 and could let a reused idempotency key or delivery id start a task here again.
  const { sql } = storage;
  storage.transactionSync(() => {
    sql.exec(`CREATE TABLE IF NOT EXISTS ${TOMBSTONE} (task_id TEXT NOT NULL, expired_at TEXT NOT NULL)`);
    sql.exec(`INSERT INTO ${TOMBSTONE} (task_id, expired_at) VALUES (?, ?)`, deps.taskId, new Date().toISOString());
    const tables = sql
      .exec<{ name: string }>(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND name != ? AND name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\'",
        TOMBSTONE,
      )
      .toArray()
      .map((t) => t.name);
    for (const name of tables) sql.exec(`DROP TABLE "${name.replaceAll('"', '""')}"`);
  });
  deps.forget();
  await storage.deleteAlarm();
}
