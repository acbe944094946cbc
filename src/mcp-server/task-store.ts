// The MCP SDK's TaskStore over Outpost's tasks: a task-augmented tools/call answers with a handle whose taskId is the
// Outpost task's id, and tasks/get, tasks/result and tasks/cancel read and cancel that task in its Durable Object. So
// a handle outlives the request, the connection and the Worker isolate that made it: any later request with a key of
// the same tenant (scopes as on /v1) finds it, and nothing of it lives in the MCP server's memory.
import type { TaskStore } from "@modelcontextprotocol/sdk/experimental/tasks";
import { ErrorCode, McpError, type Result, type Task } from "@modelcontextprotocol/sdk/types.js";
import type { Context } from "hono";
import { cancelTask } from "../commands/task-control.ts";
import { ApiError } from "../errors.ts";
import type { AppEnv } from "../http/app-env.ts";
import { requireScope } from "../http/auth.ts";
import { TaskIdParam } from "../http/schemas.ts";
import { commandContext } from "../http/task-creation.ts";
import { taskStubFor } from "../tasks/task-ids.ts";
import { protocolError } from "./errors.ts";
import { executionResultContent, mcpTask } from "./runs.ts";

export class OutpostTaskStore implements TaskStore {
  private readonly c: Context<AppEnv>;

  constructor(c: Context<AppEnv>) {
    this.c = c;
  }

  /** The task's object for this tenant, or null for an id that is not a task id (it names no task). */
  private stub(taskId: string) {
    if (!TaskIdParam.safeParse(taskId).success) return null;
    return taskStubFor(this.c.env, this.c.get("tenant"), taskId);
  }

  private require(scope: "read" | "run"): void {
    try {
      requireScope(this.c.get("apiKey").scopes, scope);
    } catch (error) {
      throw protocolError(this.c.get("requestId"), error);
    }
  }

  async createTask(): Promise<Task> {
    // The agent tools create Outpost tasks themselves (startAgentTask) and answer with their handles.
    throw new McpError(ErrorCode.InternalError, "Tasks are created by the agent tools.");
  }

  async getTask(taskId: string): Promise<Task | null> {
    this.require("read");
    const task = await this.stub(taskId)?.get();
    return task ? mcpTask(task) : null;
  }

  async storeTaskResult(): Promise<void> {
    // A task's result is its run's, stored by its object.
    throw new McpError(ErrorCode.InternalError, "A task's result is stored by its run.");
  }

  async getTaskResult(taskId: string): Promise<Result> {
    this.require("read");
    const result = await this.stub(taskId)?.executionResult();
    if (!result) throw new McpError(ErrorCode.InvalidParams, `Task ${taskId} has not ended.`);
    return executionResultContent(result);
  }

  async updateTaskStatus(taskId: string, status: Task["status"]): Promise<void> {
    if (status !== "cancelled") {
      throw new McpError(ErrorCode.InvalidParams, "A task's status changes only by its run, or by cancelling it.");
    }
    this.require("run");
    // An id that cannot be a task's names none: nothing to cancel.
    if (!this.stub(taskId)) return;
    try {
      const canceled = await cancelTask(commandContext(this.c, "mcp"), taskId);
      if (!canceled) throw new ApiError("task_not_found", "No such task.", "taskId");
    } catch (error) {
      const refused = error instanceof ApiError ? new ApiError(error.code, error.message, "taskId") : error;
      throw protocolError(this.c.get("requestId"), refused);
    }
  }

  async listTasks(): Promise<{ tasks: Task[] }> {
    // Not offered (the capability is not declared): GET /v1/tasks lists them, with filters and cursors.
    throw new McpError(ErrorCode.MethodNotFound, "Listing tasks is GET /v1/tasks.");
  }
}
