// `outpost artifacts <task> [--download dir | --tar file]`: the run bundle's files (GET /v1/tasks/:id/artifacts), each
// file saved under a folder at its bundle path (never outside the folder, whatever the path says), or the whole
// bundle saved as one tar file (GET /v1/tasks/:id/bundle), streamed to disk.
import { createWriteStream } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { dirname, resolve, sep } from "node:path";
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { OutpostError } from "../../index.ts";
import type { Context } from "../context.ts";
import { CliError, EXIT, type ExitCode } from "../exit-codes.ts";
import { formatCount, table } from "../output.ts";

interface Artifact {
  path: string;
  size: number;
  content_type: string;
  created_at: string;
  uploaded: boolean;
  [member: string]: unknown;
}

export async function artifactsCommand(
  ctx: Context,
  id: string,
  options: { download?: string; tar?: string },
): Promise<ExitCode> {
  const { client, out } = ctx;
  const enc = encodeURIComponent;
  if (options.tar !== undefined && options.download !== undefined) {
    throw new CliError("usage", "Give --download or --tar, not both.", EXIT.usage);
  }
  if (options.tar !== undefined) return saveTar(ctx, id, resolve(options.tar));
  const listing = await client.request<{ task_id: string; artifacts: Artifact[] }>(
    "GET",
    `/v1/tasks/${enc(id)}/artifacts`,
  );
  if (options.download === undefined) {
    if (out.json) out.jsonLine(listing);
    else if (listing.artifacts.length === 0) out.note("No artifacts yet.");
    else {
      const rows = listing.artifacts.map((a) => [a.path, `${formatCount(a.size)} B`, a.content_type]);
      const [head, ...body] = table([["PATH", "SIZE", "TYPE"], ...rows]);
      out.line(out.style("bold", head ?? ""));
      for (const line of body) out.line(line);
    }
    return EXIT.ok;
  }
  const folder = resolve(options.download);
  const saved: { path: string; file: string; size: number }[] = [];
  for (const artifact of listing.artifacts) {
    const file = resolve(folder, ...artifact.path.split("/"));
    if (!file.startsWith(folder + sep)) {
      throw new CliError("unsafe_path", `Artifact path ${artifact.path} leaves the folder; not saved.`, EXIT.api);
    }
    const urlPath = artifact.path.split("/").map(enc).join("/");
    const response = await client.send("GET", `/v1/tasks/${enc(id)}/artifacts/${urlPath}`);
    if (!response.ok) throw await OutpostError.from(response);
    const bytes = new Uint8Array(await response.arrayBuffer());
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, bytes);
    saved.push({ path: artifact.path, file, size: bytes.byteLength });
    if (!out.json)
      out.line(`${out.style("green", "↓")} ${file} ${out.style("dim", `${formatCount(bytes.byteLength)} B`)}`);
  }
  if (out.json) out.jsonLine({ task_id: listing.task_id, saved });
  else if (saved.length === 0) out.note("No artifacts yet.");
  return EXIT.ok;
}

/** The whole bundle as one tar file, written as it arrives; a refusal (the run has not ended) writes nothing. */
async function saveTar(ctx: Context, id: string, file: string): Promise<ExitCode> {
  const { client, out } = ctx;
  const response = await client.send("GET", `/v1/tasks/${encodeURIComponent(id)}/bundle`);
  if (!response.ok || !response.body) throw await OutpostError.from(response);
  await mkdir(dirname(file), { recursive: true });
  const counter = { bytes: 0 };
  const body = Readable.fromWeb(response.body as WebReadableStream<Uint8Array>);
  body.on("data", (chunk: Uint8Array) => {
    counter.bytes += chunk.byteLength;
  });
  await pipeline(body, createWriteStream(file));
  if (out.json) out.jsonLine({ task_id: id, file, size: counter.bytes });
  else out.line(`${out.style("green", "↓")} ${file} ${out.style("dim", `${formatCount(counter.bytes)} B`)}`);
  return EXIT.ok;
}
