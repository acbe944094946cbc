// How an agent declares its MCP servers (seed 003 MCPServer and Tool, adapted to Workers): a name, a URL and a
// transport, credentials taken from Worker secrets, and per-tool timeout_seconds and fallback_tools. Parsed when
// the agent is defined (src/agents/definition.ts), so a bad definition fails at deploy time (and in tests), never in
// the middle of a run.
import { z } from "zod";
import { secretName } from "../lib/secrets.ts";
import { checkOutboundUrl, tenantOutboundPolicy } from "../net/outbound.ts";

/** Seed 003 default: a tool call may take five minutes. */
export const DEFAULT_TOOL_TIMEOUT_SECONDS = 300;

/** Server names become the middle of mcp__<server>__<tool>: letters, digits, '-' and single '_'. */
const SERVER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;

/** A header value read from a Worker secret when the run connects: `{secret: "GITHUB_TOKEN", prefix: "Bearer "}`. */
const SecretHeader = z.strictObject({
  /** Which names a definition may use: src/lib/secrets.ts. */
  secret: secretName("GITHUB_TOKEN"),
  prefix: z.string().max(64).optional(),
});

const ToolSettings = z.strictObject({
  /** Seed 003 Tool.timeout_seconds: a positive integer. */
  timeout_seconds: z.number().int().positive().max(3600).optional(),
  /** Seed 003 Tool.fallback_tools: full tool names tried in order when this tool's call fails. */
  fallback_tools: z.array(z.string()).max(8).optional(),
});

/** Workers cannot start processes: a stdio server is refused with what to do instead. */
const STDIO_REFUSAL =
  '"stdio" cannot work on Cloudflare Workers, which cannot start processes. Run the server where it can listen on ' +
  "HTTP (most servers have a Streamable HTTP mode, and a stdio-to-HTTP bridge such as supergateway or mcp-proxy " +
  'covers the rest), then declare it with {transport: "streamable_http", url: "https://…/mcp"}.';

/** One remote MCP server's settings (also an agent file's `tools` entry, src/agents/agent-file.ts). */
export const McpServerSchema = z.strictObject({
  /**
   * "streamable_http" (the default) falls back to the legacy SSE transport when the server rejects the
   * Streamable HTTP handshake with a 4xx; "sse" uses the legacy transport only.
   */
  transport: z
    .enum(["streamable_http", "sse"], { error: (issue) => (issue.input === "stdio" ? STDIO_REFUSAL : undefined) })
    .default("streamable_http"),
  /** Seed 003 ServerConfig.url. */
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, "must be an HTTP header name"), SecretHeader).optional(),
  /** When true, a run fails if this server cannot be connected at start; otherwise it runs without its tools. */
  required: z.boolean().default(false),
  tools: z.record(z.string(), ToolSettings).optional(),
});

export type McpServerInput = z.input<typeof McpServerSchema> | { transport: "stdio"; [key: string]: unknown };

export interface McpToolSettings {
  timeoutSeconds: number;
  fallbackTools: readonly string[];
}

export interface McpServerSpec {
  name: string;
  transport: "streamable_http" | "sse";
  url: string;
  headers: Readonly<Record<string, { secret: string; prefix: string }>>;
  required: boolean;
  tools: Readonly<Record<string, McpToolSettings>>;
}

/**
 * An agent's `mcpServers` (src/agents/definition.ts composes it): remote servers by name, parsed into specs. A bad
 * entry's issue has the path to its key.
 */
export const McpServersSchema = z
  .record(
    z.string().regex(SERVER_NAME),
    // A stdio server is named in the type so that a definition declaring one compiles and is refused with the reason.
    z.custom<McpServerInput>().pipe(McpServerSchema),
    {
      error: (issue) =>
        issue.code === "invalid_key"
          ? `server names may use letters, digits, '-' and single '_' (they become mcp__${String(issue.input)}__<tool>)`
          : undefined,
    },
  )
  .transform((servers) => Object.entries(servers).map(([name, server]) => toSpec(name, server)));

function toSpec(name: string, server: z.output<typeof McpServerSchema>): McpServerSpec {
  return {
    name,
    transport: server.transport,
    url: server.url,
    headers: Object.fromEntries(
      Object.entries(server.headers ?? {}).map(([header, ref]) => [
        header,
        { secret: ref.secret, prefix: ref.prefix ?? "" },
      ]),
    ),
    required: server.required,
    tools: Object.fromEntries(
      Object.entries(server.tools ?? {}).map(([tool, settings]) => [
        tool,
        {
          timeoutSeconds: settings.timeout_seconds ?? DEFAULT_TOOL_TIMEOUT_SECONDS,
          fallbackTools: Object.freeze([...(settings.fallback_tools ?? [])]),
        },
      ]),
    ),
  };
}

export function toolSettings(spec: McpServerSpec, tool: string): McpToolSettings {
  return spec.tools[tool] ?? { timeoutSeconds: DEFAULT_TOOL_TIMEOUT_SECONDS, fallbackTools: [] };
}

/**
 * The check of the URL of a server that an agent tenant `tenant` adds at runtime declares, when the agent is defined
 * (PUT /v1/agents/:name): the run's connection judges it by the same policy again (src/net/outbound.ts), never by
 * OUTPOST_ALLOW_PRIVATE_HOSTS, which is the operator's. The check throws BlockedUrlError saying why; a setting that is
 * not valid is a ConfigError here, before any definition is judged by it.
 */
export function tenantServerCheck(tenantPrivateHosts: string | undefined, tenant: string): (url: string) => void {
  const policy = tenantOutboundPolicy(tenantPrivateHosts, tenant);
  return (url) => {
    checkOutboundUrl(url, policy);
  };
}
