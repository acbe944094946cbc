// /v1/tasks/:id/artifacts and /v1/tasks/:id/workspace, and the same under /v1/sessions/:id: a task's or a session's run
// bundle and workspace files, listed with their URLs and served from its object or straight from the blob store (R2,
// or a directory self-hosted), so a large file never passes through the object's memory.
import { Hono } from "hono";
import type { TaskObject } from "../../../durable-objects/task-object.ts";
import { openBlobStore } from "../../blob-store/open-blob-store.ts";
import { ApiError } from "../../errors.ts";
import { bundleTar } from "../../run-bundle/bundle-download.ts";
import type { RecordKind } from "../../tasks/task.ts";
import type { AppEnv } from "../app-env.ts";
import type {
  ArtifactList,
  SessionArtifactList,
  SessionWorkspaceList,
  WorkspaceList,
  WorkspaceListEntry,
} from "../responses.ts";
import { ArtifactPath, WorkspacePath } from "../schemas.ts";
import { missingTask, taskStub } from "../task-resource.ts";
import { parseWith } from "../validation.ts";
import { sessionNotFound, sessionStub } from "./session-stub.ts";

/** Where each kind of object's files are, and how a missing one is answered. */
const OWNERS = {
  task: { path: "tasks", name: "Task", stub: taskStub, missing: missingTask },
  session: {
    path: "sessions",
    name: "Session",
    stub: sessionStub,
    missing: async (_stub: unknown, id: string) => sessionNotFound(id),
  },
} as const;

const TEXT_TYPES: Readonly<Record<string, string>> = {
  md: "text/markdown; charset=utf-8",
  json: "application/json",
  html: "text/html; charset=utf-8",
  csv: "text/csv; charset=utf-8",
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  pdf: "application/pdf",
};

/** A workspace file's content type by extension; other files are served as text or bytes. */
function workspaceContentType(path: string): string {
  const ext = path.slice(path.lastIndexOf(".") + 1).toLowerCase();
  return TEXT_TYPES[ext] ?? (path.includes(".") ? "text/plain; charset=utf-8" : "application/octet-stream");
}

/** A relative file path as URL path segments: each segment percent-encoded, the slashes kept. */
function encodePath(path: string): string {
  return path.split("/").map(encodeURIComponent).join("/");
}

/**
 * A text file of a task's run bundle, read where it is (staged in the object, or a range of the archive in the blob
 * store); null when the bundle has no such file.
 */
export async function bundleFileText(
  env: AppEnv["Bindings"],
  stub: DurableObjectStub<TaskObject>,
  path: string,
): Promise<string | null> {
  const found = await stub.artifact(path, "task");
  if (!found) return null;
  if (found.kind === "staged") return found.content;
  const object = await openBlobStore(env).get(found.key, found.range ? { range: found.range } : {});
  return object ? object.text() : null;
}

/**
 * The file routes of a task (`/v1/tasks/:id/…`) or a session (`/v1/sessions/:id/…`): its run bundle and its
 * workspace, the object answering only for what it holds of that kind.
 */
function fileRoutes(kind: RecordKind) {
  const owner = OWNERS[kind];
  return new Hono<AppEnv>()
    .get("/:id/artifacts", async (c) => {
      const { id, stub } = owner.stub(c);
      const artifacts = await stub.artifacts(kind);
      if (!artifacts) throw await owner.missing(stub, id);
      const base = `${new URL(c.req.url).origin}/v1/${owner.path}/${id}/artifacts/`;
      const listed = artifacts.map((a) => ({ ...a, url: base + encodePath(a.path) }));
      return c.json(
        kind === "task"
          ? ({ task_id: id, artifacts: listed } satisfies ArtifactList)
          : ({ session_id: id, artifacts: listed } satisfies SessionArtifactList),
      );
    })
    .get("/:id/workspace", async (c) => {
      const { id, stub } = owner.stub(c);
      const files = await stub.workspaceList(kind);
      if (!files) throw await owner.missing(stub, id);
      const base = `${new URL(c.req.url).origin}/v1/${owner.path}/${id}/workspace/`;
      const listed = files.map(
        (f): WorkspaceListEntry =>
          f.type === "file" ? { ...f, type: "file", url: base + encodePath(f.path) } : { ...f, type: "directory" },
      );
      return c.json(
        kind === "task"
          ? ({ task_id: id, files: listed } satisfies WorkspaceList)
          : ({ session_id: id, files: listed } satisfies SessionWorkspaceList),
      );
    })
    .get("/:id/workspace/:path{[\\s\\S]+}", async (c) => {
      const { id, stub } = owner.stub(c);
      const path = parseWith(WorkspacePath, c.req.param("path"), "path");
      const found = await stub.workspaceFile(path, kind);
      if (found === null && !(await stub.workspaceList(kind))) throw await owner.missing(stub, id);
      if (found === null || found === "directory") {
        const what =
          found === "directory" ? `is a folder; GET /v1/${owner.path}/:id/workspace lists it` : "does not exist";
        throw new ApiError("workspace_file_not_found", `${path.slice(1)} ${what}.`, "path");
      }
      let body: ReadableStream<Uint8Array> | undefined = found.body;
      if (found.r2Key !== undefined) {
        const object = await openBlobStore(c.env).get(found.r2Key);
        if (!object) throw new ApiError("workspace_file_not_found", `${path.slice(1)} does not exist.`, "path");
        body = object.body;
      }
      return new Response(body, {
        headers: {
          "content-type": workspaceContentType(path),
          "content-length": String(found.size),
          "last-modified": new Date(found.modified_at).toUTCString(),
          // Files an agent wrote are data, never a page of this API's origin: no sniffing, no scripts.
          "x-content-type-options": "nosniff",
          "content-security-policy": "sandbox; default-src 'none'",
        },
      });
    })
    .get("/:id/bundle", async (c) => {
      const { id, stub } = owner.stub(c);
      const download = await stub.bundleDownload(kind);
      if (!download) throw await owner.missing(stub, id);
      if (!download.ended) {
        throw new ApiError(
          "run_not_ended",
          kind === "task"
            ? `Task ${id} is still running; its bundle is written when it ends.`
            : `Session ${id} is open; its bundle is written when it is closed.`,
        );
      }
      const { body, length } = bundleTar(openBlobStore(c.env), download);
      return new Response(body, {
        headers: {
          "content-type": "application/x-tar",
          "content-length": String(length),
          "content-disposition": `attachment; filename="${id}.tar"`,
        },
      });
    })
    .get("/:id/artifacts/:path{[\\s\\S]+}", async (c) => {
      const { id, stub } = owner.stub(c);
      const path = parseWith(ArtifactPath, c.req.param("path"), "path");
      const found = await stub.artifact(path, kind);
      if (!found && !(await stub.artifacts(kind))) throw await owner.missing(stub, id);
      if (!found) throw new ApiError("artifact_not_found", `${owner.name} ${id} has no artifact "${path}".`, "path");
      if (found.kind === "staged") {
        return new Response(found.content, { headers: { "content-type": found.content_type } });
      }
      const object = await openBlobStore(c.env).get(found.key, found.range ? { range: found.range } : {});
      if (!object) throw new ApiError("artifact_not_found", `${owner.name} ${id} has no artifact "${path}".`, "path");
      return new Response(object.body, {
        headers: {
          "content-type": found.content_type,
          "content-length": String(object.size),
          // The archive's entity tag names the whole archive, not this file of it.
          ...(object.httpEtag && !found.range ? { etag: object.httpEtag } : {}),
        },
      });
    });
}

export const taskFileRoutes = fileRoutes("task");
export const sessionFileRoutes = fileRoutes("session");
