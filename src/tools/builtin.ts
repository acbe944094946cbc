// The built-in tools this deployment can run, by seed 000 name. Which of them an agent gets is decided by its
// settings (src/tools/settings.ts) and allowedTools.
import { askUserTool } from "./ask-user.ts";
import { bashTool } from "./bash.ts";
import { editTool, readTool, writeTool } from "./file-tools.ts";
import { globTool, grepTool } from "./search-tools.ts";
import { taskTool } from "./task-tool.ts";
import { todoWrite } from "./todo-write.ts";
import type { BuiltinTool } from "./tool.ts";
import { webFetchTool } from "./web-fetch.ts";

export const BUILTIN_TOOL_IMPLEMENTATIONS: ReadonlyMap<string, BuiltinTool> = new Map(
  [todoWrite, readTool, writeTool, editTool, globTool, grepTool, bashTool, webFetchTool, askUserTool, taskTool].map(
    (t) => [t.name, t],
  ),
);

export const RUNNABLE_BUILTIN_TOOLS: ReadonlySet<string> = new Set(BUILTIN_TOOL_IMPLEMENTATIONS.keys());
