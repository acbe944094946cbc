// A task's (or a session's) files as the RPCs read them: its run bundle (the whole archive, one file, or where a file
// is in the blob store, the bundle completed first when the run has ended) and its workspace. The object's class
// (durable-objects/task-object.ts) delegates to this.
import type { ArtifactEntry, ArtifactLocation, BundleDownload } from "../run-bundle/run-bundle.ts";
import type { RecordKind } from "../tasks/task.ts";
import type { WorkspaceEntry } from "../workspace/workspace.ts";
import type { TaskHost } from "./task-host.ts";

export class FileSurface {
  private readonly host: TaskHost;

  constructor(host: TaskHost) {
    this.host = host;
  }

  /** The run bundle's files (a session's: `kind` "session"), or null for an unknown task or session. */
  async artifacts(kind: RecordKind = "task"): Promise<ArtifactEntry[] | null> {
    const task = this.host.recordOf(kind);
    if (!task) return null;
    await this.host.supervisor.completeBundle(task);
    return this.host.bundle.list();
  }

  /**
   * How to send the whole bundle as one tar file; `ended: false` while the run goes on (the archive is written when
   * it ends, a session's when it is closed); null for an unknown task or session.
   */
  async bundleDownload(
    kind: RecordKind = "task",
  ): Promise<({ ended: true } & BundleDownload) | { ended: false } | null> {
    const { host } = this;
    const task = host.recordOf(kind);
    if (!task) return null;
    await host.supervisor.completeBundle(task);
    if (!host.recordOf(kind)?.bundleFlushed) return { ended: false };
    return { ended: true, ...host.bundle.download() };
  }

  /** A staged artifact's content, or where it is in the blob store (R2, or a directory self-hosted). */
  async artifact(path: string, kind: RecordKind = "task"): Promise<ArtifactLocation | null> {
    const { host } = this;
    const task = host.recordOf(kind);
    if (!task) return null;
    await host.supervisor.completeBundle(task);
    return host.bundle.location(path);
  }

  /** The workspace's files and folders, or null for an unknown task (or session: `kind` "session"). */
  async workspaceList(kind: RecordKind = "task"): Promise<WorkspaceEntry[] | null> {
    return this.host.recordOf(kind) ? this.host.workspace.list() : null;
  }

  /**
   * One workspace file: its bytes as a stream when they are in a row, or its R2 key (the Worker streams it from R2,
   * so a large file never passes through this object's memory); "directory" for a folder; null when there is none.
   */
  async workspaceFile(
    path: string,
    kind: RecordKind = "task",
  ): Promise<
    | { size: number; modified_at: string; body: ReadableStream<Uint8Array>; r2Key?: undefined }
    | { size: number; modified_at: string; r2Key: string; body?: undefined }
    | "directory"
    | null
  > {
    const { workspace } = this.host;
    if (!this.host.recordOf(kind)) return null;
    const meta = workspace.stat(path);
    if (!meta) return null;
    if (meta.type === "directory") return "directory";
    const where = workspace.locate(path);
    if (!where) return null;
    const modified_at = new Date(meta.mtime).toISOString();
    if ("r2Key" in where) return { size: meta.size, modified_at, r2Key: where.r2Key };
    return { size: meta.size, modified_at, body: new Blob([where.inline]).stream() };
  }
}
