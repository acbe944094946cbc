// TodoWrite (seed 000 built-in): the agent keeps a structured task list for the run. The list lives in the task's
// Durable Object state, so it survives evictions, and every change is an event a watcher can render.
import { z } from "zod";
import { type BuiltinTool, toolError } from "./tool.ts";

const TodoSchema = z.strictObject({
  content: z.string().min(1).max(500),
  status: z.enum(["pending", "in_progress", "completed"]),
  activeForm: z.string().min(1).max(500).optional(),
});
const InputSchema = z.strictObject({ todos: z.array(TodoSchema).max(100) });
export type Todo = z.infer<typeof TodoSchema>;

export const TODO_STATE_KEY = "todo_list";

export const todoWrite: BuiltinTool = {
  name: "TodoWrite",
  description:
    "Create or replace your task list for this run. Send the whole list each time; mark exactly one item " +
    "in_progress while you work on it and mark items completed as soon as they are done.",
  inputSchema: {
    type: "object",
    properties: {
      todos: {
        type: "array",
        description: "The complete, updated task list.",
        items: {
          type: "object",
          properties: {
            content: { type: "string", description: 'What needs doing, imperative ("Run the tests").' },
            status: { type: "string", enum: ["pending", "in_progress", "completed"] },
            activeForm: { type: "string", description: 'Present continuous form ("Running the tests").' },
          },
          required: ["content", "status"],
        },
      },
    },
    required: ["todos"],
  },
  async run(input, { runtime }) {
    const parsed = InputSchema.safeParse(input);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      return toolError(
        `Invalid TodoWrite input at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}. ` +
          'Send {"todos": [{"content": "...", "status": "pending" | "in_progress" | "completed"}]}.',
      );
    }
    const todos = parsed.data.todos;
    const inProgress = todos.filter((t) => t.status === "in_progress").length;
    if (inProgress > 1) {
      return toolError(
        `${inProgress} items are in_progress; keep exactly one in_progress at a time and resend the list.`,
      );
    }
    runtime.state.put(TODO_STATE_KEY, todos);
    const completed = todos.filter((t) => t.status === "completed").length;
    runtime.emit("todo_list_updated", { todos, completed, total: todos.length });
    return { content: `Task list saved: ${todos.length} items, ${completed} completed.`, is_error: false };
  },
};
