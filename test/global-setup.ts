// Starts the outside services for the whole test run, in Node, and hands their URLs to the workerd test pool:
// the model emulator, one shared real MCP server (server-everything over Streamable HTTP), the control server
// that starts, restarts and kills further MCP servers on a test's request (optionally behind a proxy that checks a
// bearer token, logs requests and rewrites answers), a fixture web server for WebFetch, and a receiver for callbacks.
import type { TestProject } from "vitest/node";
import { startEmulator } from "../emulator/server.ts";
import { startCallbackReceiver } from "./callback-receiver.ts";
import { startEverythingServer, startMcpControl } from "./mcp-servers.ts";
import { startWebServer } from "./web-server.ts";

declare module "vitest" {
  export interface ProvidedContext {
    emulatorUrl: string;
    /** http://127.0.0.1:<port>/mcp of the shared server-everything instance. */
    mcpUrl: string;
    /** The control server of test/mcp-servers.ts (POST /servers, POST /servers/:id/restart, GET …/requests, DELETE). */
    mcpControlUrl: string;
    /** The fixture web server of test/web-server.ts. */
    webUrl: string;
    /** The webhook receiver of test/callback-receiver.ts. */
    receiverUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [emulator, mcp, control, web, receiver] = await Promise.all([
    startEmulator({ quiet: true }),
    startEverythingServer("streamableHttp"),
    startMcpControl(),
    startWebServer(),
    startCallbackReceiver(),
  ]);
  project.provide("emulatorUrl", emulator.url);
  project.provide("mcpUrl", mcp.url);
  project.provide("mcpControlUrl", control.url);
  project.provide("webUrl", web.url);
  project.provide("receiverUrl", receiver.url);
  return async () => {
    mcp.kill();
    await Promise.all([emulator.close(), control.close(), web.close(), receiver.close()]);
  };
}
