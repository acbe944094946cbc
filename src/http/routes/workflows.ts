// /v1/workflows: the workflows the key's tenant may see (GET /v1/workflows) and one of them (GET /v1/workflows/:name),
// described as their definitions were checked. Reading needs the `read` scope, as listing agents does. Running a
// workflow as a task is the next slice of issue 14 (docs/workflows.md).
import { Hono } from "hono";
import { ApiError } from "../../errors.ts";
import { workflows } from "../../workflows/catalog.ts";
import type { Workflow } from "../../workflows/workflow.ts";
import type { AppEnv } from "../app-env.ts";
import type { WorkflowDescription, WorkflowList } from "../responses.ts";

function describe(workflow: Workflow): WorkflowDescription {
  return { ...workflow.definition, source: workflow.source };
}

export const workflowRoutes = new Hono<AppEnv>()
  .get("/", (c) => {
    const list = workflows.listFor(c.get("tenant")).map(describe);
    return c.json({ workflows: list } satisfies WorkflowList);
  })
  .get("/:name", (c) => {
    const name = c.req.param("name");
    // A workflow the tenant may not see (one of its agents is hidden from it) is answered like an unknown name.
    const workflow = workflows.visible(name, c.get("tenant"));
    if (!workflow) {
      const known = workflows.listFor(c.get("tenant")).map((w) => w.name);
      throw new ApiError(
        "workflow_not_found",
        `No workflow named "${name}". Workflows: ${known.join(", ") || "none"}.`,
        "name",
      );
    }
    return c.json(describe(workflow));
  });
