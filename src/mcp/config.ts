// How an agent declares its MCP servers (seed 003 MCPServer and Tool, adapted to Workers): a name, a URL and a
// transport, credentials taken from Worker secrets, and per-tool timeout_seconds and fallback_tools. Parsed when
// the agent is defined, so a bad definition fails at deploy time (and in tests), never in the middle of a run.
import { z } from "zod";
import { ConfigError } from "../errors.ts";

/** Seed 003 default: a tool call may take five minutes. */
export const DEFAULT_TOOL_TIMEOUT_SECONDS = 300;

/** Server names become the middle of mcp__<server>__<tool>: letters, digits, '-' and single '_'. */
const SERVER_NAME = /^[A-Za-z0-9](?:[A-Za-z0-9-]|_(?!_))*$/;

/** A header value read from a Worker secret when the run connects: `{secret: "GITHUB_TOKEN", prefix: "Bearer "}`. */
const SecretHeader = z.strictObject({
  secret: z
    .string()
    .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, "must be the name of a Worker secret")
    .refine((name) => !/^(ANTHROPIC_|OUTPOST_)/.test(name), "names one of Outpost's own secrets, which never leave it"),
  prefix: z.string().max(64).optional(),
});

const ToolSettings = z.strictObject({
  /** Seed 003 Tool.timeout_seconds: a positive integer. */
  timeout_seconds: z.number().int().positive().max(3600).optional(),
  /** Seed 003 Tool.fallback_tools: full tool names tried in order when this tool's call fails. */
  fallback_tools: z.array(z.string()).max(8).optional(),
});

const RemoteServer = z.strictObject({
  /**
   * "streamable_http" (the default) falls back to the legacy SSE transport when the server rejects the
   * Streamable HTTP handshake with a 4xx; "sse" uses the legacy transport only.
   */
  transport: z.enum(["streamable_http", "sse"]).default("streamable_http"),
  /** Seed 003 ServerConfig.url. */
  url: z.url({ protocol: /^https?$/ }),
  headers: z.record(z.string().regex(/^[A-Za-z0-9-]+$/, "must be an HTTP header name"), SecretHeader).optional(),
  /** When true, a run fails if this server cannot be connected at start; otherwise it runs without its tools. */
  required: z.boolean().default(false),
  tools: z.record(z.string(), ToolSettings).optional(),
});

export type McpServerInput = z.input<typeof RemoteServer> | { transport: "stdio"; [key: string]: unknown };

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

/** Validates an agent's `mcpServers`; every problem is a ConfigError naming the path to the key. */
export function parseMcpServers(agent: string, input: Readonly<Record<string, unknown>> | undefined): McpServerSpec[] {
  const specs: McpServerSpec[] = [];
  for (const [name, raw] of Object.entries(input ?? {})) {
    const path = `mcpServers.${name}`;
    if (!SERVER_NAME.test(name)) {
      throw new ConfigError(
        `Agent "${agent}": ${path}: server names may use letters, digits, '-' and single '_' (they become mcp__${name}__<tool>).`,
      );
    }
    if (raw && typeof raw === "object" && (raw as { transport?: unknown }).transport === "stdio") {
      throw new ConfigError(
        `Agent "${agent}": ${path}.transport: "stdio" cannot work on Cloudflare Workers, which cannot start ` +
          "processes. Run the server where it can listen on HTTP (most servers have a Streamable HTTP mode, and a " +
          "stdio-to-HTTP bridge such as supergateway or mcp-proxy covers the rest), then declare it with " +
          '{transport: "streamable_http", url: "https://…/mcp"}.',
      );
    }
    const parsed = RemoteServer.safeParse(raw);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const at = [path, ...(issue?.path ?? []).map(String)].join(".");
      const detail =
        issue?.code === "unrecognized_keys"
          ? `unknown key "${issue.keys.join('", "')}"`
          : (issue?.message ?? "invalid");
      throw new ConfigError(`Agent "${agent}": ${at}: ${detail}.`);
    }
    const server = parsed.data;
    specs.push({
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
    });
  }
  return specs;
}

export function toolSettings(spec: McpServerSpec, tool: string): McpToolSettings {
  return spec.tools[tool] ?? { timeoutSeconds: DEFAULT_TOOL_TIMEOUT_SECONDS, fallbackTools: [] };
}
