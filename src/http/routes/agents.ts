// /v1/agents: the agents compiled into this Worker, and starting a task on one.
import { Hono } from "hono";
import type { Agent } from "../../agents/agent.ts";
import { registry } from "../../agents/catalog.ts";
import { resolveModel } from "../../config/models.ts";
import { ApiError } from "../../errors.ts";
import type { AppEnv } from "../app-env.ts";
import { CreateTaskBody, WorkspacePath } from "../schemas.ts";
import { jsonBody, parseWith } from "../validation.ts";
import { taskResource } from "./tasks.ts";

/** seed 003 retention default. */
const DEFAULT_RETENTION_DAYS = 7;

function describe(agent: Agent, configuredModel: string | undefined) {
  return {
    name: agent.name,
    description: agent.description,
    model: resolveModel(agent.model, configuredModel),
    allowed_tools: [...agent.allowedTools],
    // Seed 004's least-privilege settings, as the agent's built-in tools are run with them.
    capabilities: {
      bash: agent.settings.bash,
      file_system: agent.settings.fileSystem,
      web_fetch: agent.settings.webFetch,
    },
    // Where each server is and how it is reached; header secrets stay out of it.
    mcp_servers: agent.mcpServers.map((s) => ({
      name: s.name,
      transport: s.transport,
      url: s.url,
      required: s.required,
    })),
    max_turns: agent.maxTurns,
    system_prompt: agent.systemPrompt,
  };
}

/** The request's files keyed by normalized workspace path; each bad path is a 400 naming `files.<path>`. */
function seedFiles(files: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [raw, content] of Object.entries(files ?? {})) {
    const field = `files.${raw}`;
    const path = parseWith(WorkspacePath, raw, field);
    if (path in out)
      throw new ApiError(400, "validation_failed", `${raw} names the same file as another entry.`, field);
    out[path] = content;
  }
  for (const path of Object.keys(out)) {
    for (let dir = path.slice(0, path.lastIndexOf("/")); dir; dir = dir.slice(0, dir.lastIndexOf("/"))) {
      if (dir in out) {
        throw new ApiError(
          400,
          "validation_failed",
          `${dir.slice(1)} is a file, so it cannot contain ${path.slice(1)}.`,
          `files.${dir.slice(1)}`,
        );
      }
    }
  }
  return out;
}

export const agentRoutes = new Hono<AppEnv>()
  .get("/", (c) => {
    const agents = registry.list().map((name) => describe(registry.create(name), c.env.OUTPOST_DEFAULT_MODEL));
    return c.json({ agents });
  })
  .get("/:name", (c) => {
    // A name that cannot be registered is answered like any unknown name: 404 agent_not_found.
    return c.json(describe(registry.create(c.req.param("name")), c.env.OUTPOST_DEFAULT_MODEL));
  })
  .post("/:name/tasks", async (c) => {
    const agent = registry.create(c.req.param("name"));
    const body = await jsonBody(c, CreateTaskBody);
    const files = seedFiles(body.files);
    const id = crypto.randomUUID();
    const stub = c.env.TASKS.get(c.env.TASKS.idFromName(id));
    const task = await stub.start({
      id,
      agent: agent.name,
      input: body.input,
      metadata: body.metadata ?? {},
      model: resolveModel(agent.model, c.env.OUTPOST_DEFAULT_MODEL),
      retentionDays: DEFAULT_RETENTION_DAYS,
      parentTaskId: null,
      files,
    });
    const resource = taskResource(c, task);
    c.header("Location", resource.links.self);
    return c.json(resource, 202);
  });
