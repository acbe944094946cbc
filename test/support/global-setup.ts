// Starts the outside services for the whole test run, in Node, and hands their URLs to the workerd test pool:
// the model emulator, one shared real MCP server (server-everything over Streamable HTTP), the control server
// that starts, restarts and kills further MCP servers on a test's request (optionally behind a proxy that checks a
// bearer token, logs requests and rewrites answers), a fixture web server for WebFetch, a receiver for callbacks, and
// the ledger server, whose side-effecting tool honours idempotency keys.
import type { TestProject } from "vitest/node";
import { startEmulator } from "../../emulator/server.ts";
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
  project.provide("emulatorUrl", emulator.url);
  project.provide("vertexServiceAccount", emulator.serviceAccounts.known);
  project.provide("vertexServiceAccountUnknown", emulator.serviceAccounts.unknown);
  project.provide("mcpUrl", mcp.url);
  project.provide("mcpControlUrl", control.url);
  project.provide("webUrl", web.url);
  project.provide("receiverUrl", receiver.url);
  project.provide("ledgerUrl", ledger.url);
  return async () => {
    mcp.kill();
    await Promise.all([emulator.close(), control.close(), web.close(), receiver.close(), ledger.close()]);
  };
}
