// TodoWrite (seed 000 built-in): the agent keeps a structured task list for the run. The list lives in the task's
// Durable Object state, so it survives evictions, and every change is an event a watcher can render.
import { z } from "zod";
import { stateKey } from "../lib/state-key.ts";
import { defineTool } from "./define-tool.ts";
import { type BuiltinTool, toolError } from "./tool.ts";

const TodoSchema = z.strictObject({
  content: z.string().min(1).max(500).describe('What needs doing, imperative ("Run the tests").'),
  status: z.enum(["pending", "in_progress", "completed"]),
  activeForm: z.string().min(1).max(500).optional().describe('Present continuous form ("Running the tests").'),
});
const InputSchema = z.strictObject({
  todos: z.array(TodoSchema).max(100).describe("The complete, updated task list."),
});
export type Todo = z.infer<typeof TodoSchema>;

/** The run's task list, as TodoWrite last saved it. */
export const TODO_STATE_KEY = stateKey("todo_list", z.array(TodoSchema));

export const todoWrite: BuiltinTool = defineTool({
  name: "TodoWrite",
  description:
    "Create or replace your task list for this run. Send the whole list each time; mark exactly one item " +
    "in_progress while you work on it and mark items completed as soon as they are done.",
  input: InputSchema,
  example: '{"todos": [{"content": "...", "status": "pending" | "in_progress" | "completed"}]}',
  async run({ todos }, { runtime }) {
    const inProgress = todos.filter((t) => t.status === "in_progress").length;
    if (inProgress > 1) {
      return toolError(
        `${inProgress} items are in_progress; keep exactly one in_progress at a time and resend the list.`,
      );
    }
    runtime.taskState.put(TODO_STATE_KEY, todos);
    const completed = todos.filter((t) => t.status === "completed").length;
    runtime.emit("todo_list_updated", { todos, completed, total: todos.length });
    return { content: `Task list saved: ${todos.length} items, ${completed} completed.`, is_error: false };
  },
});
