/** Where the task's workspace appears to its agent: AgentContext.workspace, the shell's working directory. */
export const WORKSPACE_ROOT = "/workspace";
