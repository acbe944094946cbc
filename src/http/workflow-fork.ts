// A fork of a workflow's task (POST /v1/tasks/:id/fork on a task that runs a workflow): the new task runs the same
// workflow again from the checkpoint's node (its position) with the State as it was there, the request's
// state_updates applied by seed 003's reducer (messages appended, metadata replaced). The node itself runs again:
// its checkpoint is taken on entering it, before it did anything. An agent's fork rules (src/tasks/fork.ts) are
// about a conversation's tool calls, which a workflow's checkpoints never stand between.
import type { Context } from "hono";
import { registry as agents } from "../agents/catalog.ts";
import { ApiError } from "../errors.ts";
import type { Checkpoint } from "../runtime/checkpoints.ts";
import type { TaskView } from "../tasks/task.ts";
import { type NewTask, taskInit } from "../tasks/task-init.ts";
import { workflows } from "../workflows/catalog.ts";
import { WorkflowAgent } from "../workflows/workflow-agent.ts";
import type { AppEnv } from "./app-env.ts";
import type { ForkBody } from "./schemas.ts";
import { creationId, startTask, takeRateToken } from "./task-creation.ts";

export async function forkWorkflow(
  c: Context<AppEnv>,
  origin: TaskView & { workflow: string },
  checkpoint: Checkpoint,
  body: ForkBody,
): Promise<Response> {
  const updates = body.state_updates ?? {};
  if (updates.current_agent !== undefined) {
    throw new ApiError(
      "validation_failed",
      `A fork of a workflow's task runs the workflow ${origin.workflow}; its nodes name their agents.`,
      "state_updates.current_agent",
    );
  }
  const workflow = workflows.visible(origin.workflow, c.get("tenant"));
  if (!workflow) {
    throw new ApiError("workflow_not_found", `No workflow named "${origin.workflow}".`, "checkpoint_id");
  }
  const node = checkpoint.position;
  if (checkpoint.state.next_action !== "run_node" || !(node in workflow.definition.nodes)) {
    throw new ApiError(
      "validation_failed",
      `Checkpoint ${checkpoint.checkpoint_id} is not at a node of the workflow ${workflow.name}.`,
      "checkpoint_id",
    );
  }
  const { state } = checkpoint;
  // The checkpoint names the workflow itself as current_agent until an agent node has run.
  const currentAgent = state.current_agent === workflow.name ? null : state.current_agent;
  const messages = [...state.messages, ...(updates.messages ?? [])];
  const fork: Omit<NewTask, "id" | "fingerprint" | "tenant"> = {
    agent: new WorkflowAgent(workflow, agents),
    model: origin.model,
    webhook: origin.webhook,
    redactionMode: origin.redaction_mode,
    input: origin.input,
    metadata: updates.metadata ?? origin.metadata,
    tags: origin.tags,
    parentTaskId: origin.id,
    limits: origin.limits,
    fork: { task_id: origin.id, checkpoint_id: checkpoint.checkpoint_id, messages, turn: 0, settled: {} },
  };
  await takeRateToken(c);
  const { id, fingerprint } = await creationId(c, body);
  const tenant = c.get("tenant");
  return startTask(c, tenant, {
    ...taskInit(c.env, { ...fork, id, fingerprint, tenant }),
    workflow: {
      name: workflow.name,
      from: {
        node,
        current_agent: currentAgent,
        routing_key: updates.routing_key !== undefined ? updates.routing_key : state.routing_key,
        metadata: updates.metadata ?? state.metadata,
      },
    },
  });
}
