// The artifact and workspace browser of a task or a session: the workspace's files (what the agent wrote) and the
// run bundle's files (transcripts, events, the final summary), listed by their routes and opened in place. A text
// file is shown as text (a text node, whatever it holds); anything else, or a large file, is offered as a download
// made from the bytes fetched with the key (a blob: link), since a plain link would not carry the key.
import type { OutpostClient } from "@outpost/client";
import { describeError, formatBytes, formatTime, h, replace } from "./dom.ts";

/** Files larger than this are downloaded rather than shown. */
const PREVIEW_BYTES = 512 * 1024;

interface Listed {
  path: string;
  type?: string;
  size?: number;
  content_type?: string;
  modified_at?: string;
  created_at?: string;
  url?: string;
}

/** `base` is /v1/tasks/:id or /v1/sessions/:id. */
export function filesView(client: OutpostClient, base: string): HTMLElement {
  const viewer = h(
    "div",
    { class: "viewer", "aria-live": "polite" },
    h("p", { class: "muted" }, "Choose a file to open it."),
  );
  const workspace = h("div", null, h("p", { class: "muted" }, "Loading…"));
  const artifacts = h("div", null, h("p", { class: "muted" }, "Loading…"));
  const open = async (file: Listed) => {
    if (!file.url) return;
    replace(viewer, h("p", { class: "muted" }, `Opening ${file.path}…`));
    try {
      const response = await client.send("GET", new URL(file.url).pathname);
      if (!response.ok) throw new Error(`${response.status} ${await response.text()}`);
      const type = response.headers.get("content-type") ?? "";
      const blob = await response.blob();
      const textual = /^text\/|json|xml|yaml|javascript|x-ndjson/.test(type);
      const name = file.path.split("/").pop() || "file";
      const download = h("a", { href: URL.createObjectURL(blob), download: name, class: "button small" }, "Download");
      const head = h(
        "div",
        { class: "viewer-head" },
        h("strong", null, file.path),
        h("span", { class: "muted" }, ` ${formatBytes(blob.size)} · ${type}`),
        download,
      );
      if (textual && blob.size <= PREVIEW_BYTES)
        replace(viewer, head, h("pre", { class: "block file" }, await blob.text()));
      else replace(viewer, head, h("p", { class: "muted" }, "Not shown here: download it."));
    } catch (error) {
      replace(viewer, h("p", { class: "error", role: "alert" }, describeError(error)));
    }
  };
  const list = (target: HTMLElement, files: Listed[], empty: string) => {
    const shown = files.filter((f) => f.type !== "directory");
    if (shown.length === 0) {
      replace(target, h("p", { class: "muted" }, empty));
      return;
    }
    replace(
      target,
      h(
        "ul",
        { class: "files" },
        shown.map((file) => {
          const button = h("button", { type: "button", class: "link" }, file.path);
          button.addEventListener("click", () => void open(file));
          return h(
            "li",
            null,
            button,
            h(
              "span",
              { class: "muted small" },
              ` ${formatBytes(file.size)} ${formatTime(file.modified_at ?? file.created_at)}`,
            ),
          );
        }),
      ),
    );
  };
  const load = async () => {
    const [ws, art] = await Promise.allSettled([
      client.request<{ files: Listed[] }>("GET", `${base}/workspace`),
      client.request<{ artifacts: Listed[] }>("GET", `${base}/artifacts`),
    ]);
    if (ws.status === "fulfilled") list(workspace, ws.value.files, "The workspace is empty.");
    else replace(workspace, h("p", { class: "error" }, describeError(ws.reason)));
    if (art.status === "fulfilled") list(artifacts, art.value.artifacts, "No artifacts yet.");
    else replace(artifacts, h("p", { class: "error" }, describeError(art.reason)));
  };
  const refresh = h("button", { type: "button", class: "small" }, "Refresh");
  refresh.addEventListener("click", () => void load());
  void load();
  return h(
    "div",
    { class: "files-view" },
    h(
      "div",
      { class: "file-lists" },
      h("div", { class: "actions" }, refresh),
      h("h3", null, "Workspace"),
      workspace,
      h("h3", null, "Artifacts"),
      artifacts,
    ),
    viewer,
  );
}
