// /v1/tasks/:id/artifacts and /v1/tasks/:id/workspace: a task's run bundle and workspace files, listed with their URLs
// and served from the task's object or straight from R2 (a large file never passes through the object's memory).
import { Hono } from "hono";
import { ApiError } from "../../errors.ts";
import type { AppEnv } from "../app-env.ts";
import type { ArtifactList, WorkspaceList, WorkspaceListEntry } from "../responses.ts";
import { ArtifactPath, WorkspacePath } from "../schemas.ts";
import { missingTask, taskStub } from "../task-resource.ts";
import { parseWith } from "../validation.ts";

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

export const taskFileRoutes = new Hono<AppEnv>()
  .get("/:id/artifacts", async (c) => {
    const { id, stub } = taskStub(c);
    const artifacts = await stub.artifacts();
    if (!artifacts) throw await missingTask(stub, id);
    const base = `${new URL(c.req.url).origin}/v1/tasks/${id}/artifacts/`;
    return c.json({
      task_id: id,
      artifacts: artifacts.map((a) => ({ ...a, url: base + encodePath(a.path) })),
    } satisfies ArtifactList);
  })
  .get("/:id/workspace", async (c) => {
    const { id, stub } = taskStub(c);
    const files = await stub.workspaceList();
    if (!files) throw await missingTask(stub, id);
    const base = `${new URL(c.req.url).origin}/v1/tasks/${id}/workspace/`;
    return c.json({
      task_id: id,
      files: files.map(
        (f): WorkspaceListEntry =>
          f.type === "file" ? { ...f, type: "file", url: base + encodePath(f.path) } : { ...f, type: "directory" },
      ),
    } satisfies WorkspaceList);
  })
  .get("/:id/workspace/:path{[\\s\\S]+}", async (c) => {
    const { id, stub } = taskStub(c);
    const path = parseWith(WorkspacePath, c.req.param("path"), "path");
    const found = await stub.workspaceFile(path);
    if (found === null && !(await stub.get())) throw await missingTask(stub, id);
    if (found === null || found === "directory") {
      const what = found === "directory" ? "is a folder; GET /v1/tasks/:id/workspace lists it" : "does not exist";
      throw new ApiError("workspace_file_not_found", `${path.slice(1)} ${what}.`, "path");
    }
    let body: ReadableStream<Uint8Array> | undefined = found.body;
    if (found.r2Key !== undefined) {
      const object = await c.env.RUNS.get(found.r2Key);
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
  .get("/:id/artifacts/:path{[\\s\\S]+}", async (c) => {
    const { id, stub } = taskStub(c);
    const path = parseWith(ArtifactPath, c.req.param("path"), "path");
    const found = await stub.artifact(path);
    if (!found && !(await stub.get())) throw await missingTask(stub, id);
    if (!found) throw new ApiError("artifact_not_found", `Task ${id} has no artifact "${path}".`, "path");
    if (found.kind === "staged") {
      return new Response(found.content, { headers: { "content-type": found.content_type } });
    }
    const object = await c.env.RUNS.get(found.key);
    if (!object) throw new ApiError("artifact_not_found", `Task ${id} has no artifact "${path}".`, "path");
    return new Response(object.body, {
      headers: {
        "content-type": object.httpMetadata?.contentType ?? "application/octet-stream",
        "content-length": String(object.size),
        etag: object.httpEtag,
      },
    });
  });
