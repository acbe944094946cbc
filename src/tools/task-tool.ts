// Task (seed 000's name; seed 003 SubAgentSession, seed 004 SubagentConfig): the model delegates a piece of work to
// another agent, which runs as a child task in its own Durable Object with a conversation of its own. The calls of a
// turn are started together, up to subagents.max_parallel at a time (the run's toolbox does that, see
// Toolbox.prepare); a call whose child has not ended stops the run without failing it (AwaitingSubagentsError), and
// the child's end starts it again from its journal, where this call finds the child's answer.
import { z } from "zod";
import type { SubagentHost } from "../contracts/subagents.ts";
import { AwaitingSubagentsError } from "../errors.ts";
import { defineTool } from "./define-tool.ts";
import type { BuiltinTool } from "./tool.ts";

export const TASK_TOOL = "Task";

const TaskInput = z.strictObject({
  agent: z.string().min(1).describe("The agent to delegate to (one of those listed)."),
  description: z.string().min(1).max(200).describe("What the sub-task is, in a few words."),
  prompt: z
    .string()
    .min(1)
    .max(100_000)
    .describe("The sub-task, in full: the agent sees only this, not your conversation."),
});

export const taskTool: BuiltinTool = defineTool({
  name: TASK_TOOL,
  description:
    "Delegate a self-contained sub-task to another agent. It runs on its own, with its own tools and an empty " +
    "conversation (it sees only the prompt), and its final answer comes back as this call's result. Several Task " +
    "calls in one turn run in parallel.",
  input: TaskInput,
  example: '{"agent": "…", "description": "…", "prompt": "…"}',
  async run(args, ctx) {
    const host = ctx.subagents;
    if (!host) return { content: "Sub-agents are not available to this task.", is_error: true };
    // Started with the rest of its turn (startSubagents), unless it waited for a person's approval or a free place.
    if (!host.get(ctx.toolUseId) && host.running() < ctx.settings.subagents.max_parallel) {
      await host.start({ tool_use_id: ctx.toolUseId, ...args });
    }
    const record = host.get(ctx.toolUseId);
    if (record?.outcome) return { content: record.outcome.summary, is_error: record.outcome.is_error };
    throw new AwaitingSubagentsError(`The Task call ${ctx.toolUseId} waits for its sub-agent.`);
  },
});

/** The Task tool's input schema for an agent: `agent` is one of those it may delegate to. */
export function taskInputSchema(agents: readonly string[]): BuiltinTool["inputSchema"] {
  const schema = structuredClone(taskTool.inputSchema);
  const agent = schema.properties.agent as Record<string, unknown>;
  schema.properties.agent = { ...agent, enum: [...agents] };
  return schema;
}

/**
 * Starts the children of a turn's Task calls that have none yet, in the turn's order, while fewer than `maxParallel`
 * run; the rest start as earlier ones end (the run comes back here each time a child ends).
 */
export async function startSubagents(
  host: SubagentHost,
  calls: readonly { id: string; input: unknown }[],
  maxParallel: number,
): Promise<void> {
  const waiting = calls.flatMap((call) => {
    const parsed = TaskInput.safeParse(call.input);
    // An invalid call is answered by the tool itself (defineTool), without a child.
    return !host.get(call.id) && parsed.success ? [{ id: call.id, input: parsed.data }] : [];
  });
  for (const [index, call] of waiting.entries()) {
    if (host.running() >= maxParallel) return;
    // The calls starting now share what the task's budgets have left (src/subagents/tree-budget.ts).
    const places = Math.min(waiting.length - index, maxParallel - host.running());
    await host.start({ tool_use_id: call.id, ...call.input }, places);
  }
}
