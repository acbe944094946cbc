// `outpost agents [name]`: the agents the key's tenant may run (GET /v1/agents), or one agent in full.
import type { Context } from "../context.ts";
import { EXIT, type ExitCode } from "../exit-codes.ts";
import { short, table } from "../output.ts";

export async function agentsCommand(ctx: Context, name: string | undefined): Promise<ExitCode> {
  const { client, out } = ctx;
  if (name !== undefined) {
    const agent = await client.agents.get(name);
    if (out.json) out.jsonLine(agent);
    else for (const line of describeAgent(agent)) out.line(line);
    return EXIT.ok;
  }
  const { agents } = await client.agents.list();
  if (out.json) {
    out.jsonLine({ agents });
    return EXIT.ok;
  }
  if (agents.length === 0) {
    out.note("No agents for this key's tenant.");
    return EXIT.ok;
  }
  const rows = agents.map((a) => [String(a.name), String(a.model ?? ""), short(a.description ?? "", 80)]);
  const [head, ...body] = table([["NAME", "MODEL", "DESCRIPTION"], ...rows]);
  out.line(out.style("bold", head ?? ""));
  for (const line of body) out.line(line);
  return EXIT.ok;
}

function describeAgent(agent: Record<string, unknown>): string[] {
  const tools = Array.isArray(agent.allowed_tools) ? agent.allowed_tools.join(", ") : "";
  return [
    `${String(agent.name)} (${String(agent.kind ?? "tool_loop")}, ${String(agent.model ?? "")})`,
    String(agent.description ?? ""),
    `tools: ${tools || "none"}`,
    `permission mode: ${String(agent.permission_mode ?? "acceptAll")}`,
    `max turns: ${String(agent.max_turns ?? "")}`,
  ];
}
