// The OpenAPI operations of one resource (The agents and workflows a tenant can run, and its own agents added at runtime.), assembled by src/http/openapi/operations.ts.
import { z } from "zod";
import { AgentFileSchema } from "../../../agents/agent-file.ts";
import {
  AgentListSchema,
  AgentSchema,
  AgentVersionListSchema,
  InvocationSchema,
  SessionResponseSchema,
  TaskResponseSchema,
  WorkflowListSchema,
  WorkflowSchema,
} from "../../responses.ts";
import { CreateSessionBody, CreateTaskBody, InvokeBody } from "../../schemas.ts";
import {
  AcceptStream,
  AgentName,
  Created,
  CreationHeaders,
  IdempotencyKey,
  type OperationSpec,
  startedTask,
  TaskCreationHeaders,
  Wait,
  WorkflowName,
} from "./spec.ts";

export const AGENTS: OperationSpec[] = [
  {
    method: "get",
    path: "/v1/agents",
    operationId: "listAgents",
    tag: "agents",
    summary: "List the agents the key's tenant can run",
    access: "read",
    answers: { 200: { description: "The agents, by name.", json: AgentListSchema } },
    errors: [],
  },
  {
    method: "get",
    path: "/v1/agents/{name}",
    operationId: "getAgent",
    tag: "agents",
    summary: "Describe an agent",
    access: "read",
    params: { path: AgentName },
    answers: { 200: { description: "The agent's definition (never a secret's value).", json: AgentSchema } },
    errors: ["agent_not_found"],
  },
  {
    method: "put",
    path: "/v1/agents/{name}",
    operationId: "putAgent",
    tag: "agents",
    summary: "Add or replace one of the tenant's own agents",
    description:
      "The body is an agent file (YAML or JSON); each change is a new version. If-Match names the version the client saw (0: the agent must not exist yet). Deployment settings (hooks, tenants, another model endpoint or key, MCP headers) are refused, and so are private MCP hosts the operator did not give the tenant (OUTPOST_TENANT_PRIVATE_HOSTS) and sub-agents the tenant cannot run or that lead back to the agent. A tenant keeps at most OUTPOST_MAX_RUNTIME_AGENTS agents and OUTPOST_MAX_AGENT_VERSIONS versions of each.",
    access: "admin",
    params: {
      path: AgentName,
      header: z.object({
        "if-match": z
          .string()
          .optional()
          .describe('The version the client saw, e.g. "3" (0: the agent must not exist yet).'),
      }),
    },
    rawBody: {
      description: "The agent file, at most 256 KiB.",
      content: { "application/yaml": z.string(), "application/json": AgentFileSchema },
    },
    answers: {
      200: { description: "Replaced (or unchanged: Idempotent-Replayed: true).", json: AgentSchema, headers: Created },
      201: { description: "Created.", json: AgentSchema, headers: Created },
    },
    errors: [
      "validation_failed",
      "invalid_json",
      "unsupported_media_type",
      "payload_too_large",
      "agent_version_conflict",
      "agent_limit_reached",
      "agent_version_limit_reached",
    ],
  },
  {
    method: "get",
    path: "/v1/agents/{name}/versions",
    operationId: "listAgentVersions",
    tag: "agents",
    summary: "List the versions of one of the tenant's own agents",
    access: "read",
    params: { path: AgentName },
    answers: { 200: { description: "Every version, newest first.", json: AgentVersionListSchema } },
    errors: ["agent_not_found"],
  },
  {
    method: "post",
    path: "/v1/agents/{name}/sessions",
    operationId: "createSession",
    tag: "sessions",
    summary: "Start a chat session with an agent",
    access: "run",
    params: { path: AgentName, header: CreationHeaders },
    body: CreateSessionBody,
    answers: { 201: { description: "The session.", json: SessionResponseSchema, headers: Created } },
    errors: [
      "agent_not_found",
      "agent_not_conversational",
      "rate_limited",
      "idempotency_key_reused",
      "task_expired",
      "workspace_full",
    ],
  },
  {
    method: "post",
    path: "/v1/agents/{name}/invoke",
    operationId: "invokeAgent",
    tag: "agents",
    summary: "Run an agent once on a message and wait for its answer",
    description:
      "Seed 004 invoke_once: one message on a fresh conversation seeded with `context`. Waits up to `wait` seconds (30 by default): 200 with the ExecutionResult once the run has ended, else 202 with the task. With `Accept: text/event-stream`, the run's events as they happen (needs `read`).",
    access: "run",
    params: {
      path: AgentName,
      query: z.object({ wait: Wait }),
      header: z.object({ accept: AcceptStream, "idempotency-key": IdempotencyKey }),
    },
    body: InvokeBody,
    answers: {
      200: {
        description:
          "The run has ended: the task and its ExecutionResult; or, with Accept: text/event-stream, the run's events.",
        json: InvocationSchema,
        sse: true,
        headers: Created,
      },
      202: {
        description: "Still running (or the key may not read): the task.",
        json: TaskResponseSchema,
        headers: Created,
      },
    },
    errors: ["agent_not_found", "agent_not_conversational", "rate_limited", "idempotency_key_reused", "task_expired"],
  },
  {
    method: "post",
    path: "/v1/agents/{name}/tasks",
    operationId: "createTask",
    tag: "tasks",
    summary: "Start a task on an agent",
    access: "run",
    params: { path: AgentName, header: TaskCreationHeaders },
    body: CreateTaskBody,
    answers: startedTask("The task", TaskResponseSchema),
    errors: [
      "agent_not_found",
      "rate_limited",
      "idempotency_key_reused",
      "task_expired",
      "workspace_full",
      "invalid_callback_url",
      "callbacks_not_configured",
    ],
  },
];

export const WORKFLOWS: OperationSpec[] = [
  {
    method: "get",
    path: "/v1/workflows",
    operationId: "listWorkflows",
    tag: "workflows",
    summary: "List the workflows the key's tenant can run",
    access: "read",
    answers: { 200: { description: "The workflows, by name.", json: WorkflowListSchema } },
    errors: [],
  },
  {
    method: "get",
    path: "/v1/workflows/{name}",
    operationId: "getWorkflow",
    tag: "workflows",
    summary: "Describe a workflow",
    access: "read",
    params: { path: WorkflowName },
    answers: { 200: { description: "The workflow's definition, as checked.", json: WorkflowSchema } },
    errors: ["workflow_not_found"],
  },
  {
    method: "post",
    path: "/v1/workflows/{name}/tasks",
    operationId: "createWorkflowTask",
    tag: "workflows",
    summary: "Start a run of a workflow as a task",
    access: "run",
    params: { path: WorkflowName, header: TaskCreationHeaders },
    body: CreateTaskBody,
    answers: startedTask("The task", TaskResponseSchema),
    errors: [
      "workflow_not_found",
      "rate_limited",
      "idempotency_key_reused",
      "task_expired",
      "workspace_full",
      "invalid_callback_url",
      "callbacks_not_configured",
    ],
  },
];
