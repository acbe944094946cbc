// Starts the outside services for the whole test run, in Node, and hands their URLs to the workerd test pool:
// the model emulator, one shared real MCP server (server-everything over Streamable HTTP), and the control
// server that starts and kills further MCP servers on a test's request.
import type { TestProject } from "vitest/node";
import { startEmulator } from "../emulator/server.ts";
import { startEverythingServer, startMcpControl } from "./mcp-servers.ts";

declare module "vitest" {
  export interface ProvidedContext {
    emulatorUrl: string;
    /** http://127.0.0.1:<port>/mcp of the shared server-everything instance. */
    mcpUrl: string;
    /** The control server of test/mcp-servers.ts. */
    mcpControlUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const [emulator, mcp, control] = await Promise.all([
    startEmulator({ quiet: true }),
    startEverythingServer("streamableHttp"),
    startMcpControl(),
  ]);
  project.provide("emulatorUrl", emulator.url);
  project.provide("mcpUrl", mcp.url);
  project.provide("mcpControlUrl", control.url);
  return async () => {
    mcp.kill();
    await Promise.all([emulator.close(), control.close()]);
  };
}
