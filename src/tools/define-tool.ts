// One definition per built-in tool: its zod input schema is both what the model is shown (as JSON Schema, with the
// fields' descriptions) and what every call is checked against, so the two cannot drift apart. Input that does not
// match is answered with an is_error result naming the field and showing an example, and the tool never runs.
import { z } from "zod";
import type { ToolResult } from "../contracts/tool-result.ts";
import type { BuiltinTool, ToolContext } from "./tool.ts";
import { toolError } from "./tool.ts";

export interface ToolSpec<S extends z.ZodType<Record<string, unknown>>> {
  name: string;
  description: string;
  input: S;
  /** A valid input, shown to the model after an invalid one. */
  example: string;
  changesWorkspace?: boolean;
  /** Changes nothing (see BuiltinTool.readOnly). */
  readOnly?: boolean;
  run(input: z.output<S>, context: ToolContext): Promise<ToolResult>;
}

export function defineTool<S extends z.ZodType<Record<string, unknown>>>(spec: ToolSpec<S>): BuiltinTool {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(spec.input, { io: "input" }) as Record<string, unknown>;
  return {
    name: spec.name,
    description: spec.description,
    inputSchema: schema as BuiltinTool["inputSchema"],
    ...(spec.changesWorkspace ? { changesWorkspace: true } : {}),
    ...(spec.readOnly ? { readOnly: true } : {}),
    async run(input, context) {
      const parsed = spec.input.safeParse(input);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        return toolError(
          `Invalid ${spec.name} input at ${issue?.path.join(".") || "(root)"}: ${issue?.message ?? "invalid"}. ` +
            `Send ${spec.example}.`,
        );
      }
      return spec.run(parsed.data, context);
    },
  };
}
