// The agent of a workflow's task: what a task's object runs when its task names a workflow (its state's
// WorkflowTaskState), built from the workflow the Worker serves, checked again at every run like an agent is: a
// deploy that removes the workflow, or hides one of its agents from the tenant, stops its waiting tasks too.
import { registry as agents } from "../agents/catalog.ts";
import { WorkflowError } from "../errors.ts";
import { workflows } from "./catalog.ts";
import type { WorkflowStart } from "./run.ts";
import { WorkflowAgent } from "./workflow-agent.ts";

export function workflowAgent(name: string, tenant: string, from?: WorkflowStart): WorkflowAgent {
  const workflow = workflows.visible(name, tenant);
  if (!workflow) throw new WorkflowError(`This deployment no longer serves the workflow "${name}" to this tenant.`);
  return new WorkflowAgent(workflow, agents, from);
}
