// /v1/workflows: the workflows the key's tenant may see (GET /v1/workflows) and one of them (GET /v1/workflows/:name),
// described as their definitions were checked, and a run of one as a task (POST /v1/workflows/:name/tasks). Reading
// needs the `read` scope, as listing agents does; starting a run needs `run`, as starting an agent's task does, and
// takes the same body, checked by the same rules (src/http/task-creation.ts).
import type { Context } from "hono";
import { Hono } from "hono";
import { registry as agents } from "../../agents/catalog.ts";
import { ApiError } from "../../errors.ts";
import type { TaskWebhook } from "../../tasks/task.ts";
import { workflows } from "../../workflows/catalog.ts";
import type { Workflow } from "../../workflows/workflow.ts";
import { WorkflowAgent } from "../../workflows/workflow-agent.ts";
import type { AppEnv } from "../app-env.ts";
import type { WorkflowDescription, WorkflowList } from "../responses.ts";
import { CreateTaskBody } from "../schemas.ts";
import { newRun, requestedWebhook, seedFiles, startTask } from "../task-creation.ts";
import { jsonBody } from "../validation.ts";

function describe(workflow: Workflow): WorkflowDescription {
  return { ...workflow.definition, source: workflow.source };
}

export const workflowRoutes = new Hono<AppEnv>()
  .get("/", (c) => {
    const list = workflows.listFor(c.get("tenant")).map(describe);
    return c.json({ workflows: list } satisfies WorkflowList);
  })
  .get("/:name", (c) => c.json(describe(workflowFor(c, c.req.param("name")))))
  .post("/:name/tasks", async (c) => {
    const workflow = workflowFor(c, c.req.param("name"));
    const body = await jsonBody(c, CreateTaskBody);
    if (body.dry_run) {
      throw new ApiError(
        "validation_failed",
        "A workflow's run has no prompt of its own to compose: dry_run is for an agent's task.",
        "dry_run",
      );
    }
    const agent = new WorkflowAgent(workflow, agents);
    const files = seedFiles(body.files);
    let webhook: TaskWebhook | null = null;
    const init = await newRun(c, agent, body, {
      input: body.input,
      files,
      check: () => {
        webhook = requestedWebhook(c, body);
      },
    });
    return startTask(c, init.tenant, { ...init, webhook, workflow: { name: workflow.name } });
  });

/** The workflow `name` if the key's tenant may see it; a hidden one (an agent it names is hidden) is unknown. */
function workflowFor(c: Context<AppEnv>, name: string): Workflow {
  const workflow = workflows.visible(name, c.get("tenant"));
  if (workflow) return workflow;
  const known = workflows.listFor(c.get("tenant")).map((w) => w.name);
  throw new ApiError(
    "workflow_not_found",
    `No workflow named "${name}". Workflows: ${known.join(", ") || "none"}.`,
    "name",
  );
}
