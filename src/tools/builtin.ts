// The built-in tools this deployment can run, by seed 000 name. The workspace tools (Read, Write, Bash, …) and
// WebFetch join this table with the tools issue.

import { todoWrite } from "./todo-write.ts";
import type { BuiltinTool } from "./tool.ts";

export const BUILTIN_TOOL_IMPLEMENTATIONS: ReadonlyMap<string, BuiltinTool> = new Map([[todoWrite.name, todoWrite]]);

export const RUNNABLE_BUILTIN_TOOLS: ReadonlySet<string> = new Set(BUILTIN_TOOL_IMPLEMENTATIONS.keys());
