// A fresh Durable Object with a migrated, empty workspace for each workspace test: its real SQLite and the real R2
// binding, nothing mocked.
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { migrate } from "../../src/storage/migrations.ts";
import { Workspace } from "../../src/workspace/workspace.ts";
import { WorkspaceFs } from "../../src/workspace/workspace-fs.ts";
import { runsBucket, runsStore } from "./runs-bucket.ts";

export interface Harness {
  ws: Workspace;
  sql: SqlStorage;
  /** This workspace's R2 key prefix. */
  prefix: string;
  /** A new WorkspaceFs over the same store: sees only what was committed. */
  fresh(readOnly?: boolean): WorkspaceFs;
  /** Keys of this workspace's R2 objects. */
  r2Keys(): Promise<string[]>;
}

/** Runs `fn` inside a new Durable Object with a migrated, empty workspace. */
export function withWorkspace<T>(fn: (h: Harness) => Promise<T>): Promise<T> {
  const stub = env.TASKS.get(env.TASKS.idFromName(`workspace-fs-${crypto.randomUUID()}`));
  return runInDurableObject(stub, async (_instance, state) => {
    const sql = state.storage.sql;
    migrate(state.storage);
    const prefix = `workspaces/test-${crypto.randomUUID()}/`;
    const ws = new Workspace(
      sql,
      runsStore(),
      () => prefix,
      (f) => state.storage.transactionSync(f),
    );
    return fn({
      ws,
      sql,
      prefix,
      fresh: (readOnly = false) => new WorkspaceFs(ws, { readOnly }),
      r2Keys: async () => (await runsBucket().list({ prefix })).objects.map((o) => o.key),
    });
  });
}
