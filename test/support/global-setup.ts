// Starts the outside services for the whole test run, in Node, and hands their URLs to the workerd test pool:
// the model emulator, one shared real MCP server (server-everything over Streamable HTTP), the control server
// that starts, restarts and kills further MCP servers on a test's request (optionally behind a proxy that checks a
// bearer token, logs requests and rewrites answers), a fixture web server for WebFetch, a receiver for callbacks, and
// the ledger server, whose side-effecting tool honours idempotency keys, and a workerd disk service over a temporary
// directory (the self-hosted blob store's backend, test/blob-store/).
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { freePort } from "../../bench/wrangler.ts";
import { startEmulator } from "../../emulator/server.ts";
import { serveDiskDirectory } from "../../scripts/self-host/server.ts";
import { startCallbackReceiver } from "./callback-receiver.ts";
import { startLedgerServer } from "./ledger-mcp-server.ts";
import { startEverythingServer, startMcpControl } from "./mcp-servers.ts";
import { startWebServer } from "./web-server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    emulatorUrl: string;
    /** The emulator's Vertex service accounts (JSON keys): one its token endpoint knows, one it does not. */
    vertexServiceAccount: string;
    vertexServiceAccountUnknown: string;
    /** http://127.0.0.1:<port>/mcp of the shared server-everything instance. */
    mcpUrl: string;
    /** The control server of test/support/mcp-servers.ts (POST /servers, POST /servers/:id/restart, GET …/requests, DELETE). */
    mcpControlUrl: string;
    /** The fixture web server of test/support/web-server.ts. */
    webUrl: string;
    /** The webhook receiver of test/support/callback-receiver.ts. */
    receiverUrl: string;
    /** The MCP server of test/support/ledger-mcp-server.ts: /mcp, /sse, /stats and /forget-sessions below it. */
    ledgerUrl: string;
    /** http://127.0.0.1:<port> of a workerd disk service (writable, dotfiles allowed) over a temporary directory. */
    diskUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [emulator, mcp, control, web, receiver, ledger] = await Promise.all([
    startEmulator({ quiet: true }),
    startEverythingServer("streamableHttp"),
    startMcpControl(),
    startWebServer(),
    startCallbackReceiver(),
    startLedgerServer(),
  ]);
  const diskRoot = mkdtempSync(join(tmpdir(), "outpost-disk-"));
  const disk = await serveDiskDirectory(
    resolve(import.meta.dirname, "../.."),
    join(diskRoot, "runs"),
    await freePort(),
  );
  project.provide("emulatorUrl", emulator.url);
  project.provide("vertexServiceAccount", emulator.serviceAccounts.known);
  project.provide("vertexServiceAccountUnknown", emulator.serviceAccounts.unknown);
  project.provide("mcpUrl", mcp.url);
  project.provide("mcpControlUrl", control.url);
  project.provide("webUrl", web.url);
  project.provide("receiverUrl", receiver.url);
  project.provide("ledgerUrl", ledger.url);
  project.provide("diskUrl", disk.url);
  return async () => {
    mcp.kill();
    await disk.stop();
    rmSync(diskRoot, { recursive: true, force: true });
    await Promise.all([emulator.close(), control.close(), web.close(), receiver.close(), ledger.close()]);
  };
}
