// Seed 003's TraceLog as the API and the run bundle's trace.json give it (GET /v1/tasks/:id/trace): a tree of the
// task's steps and, under sub_agent_sessions, each sub-agent's own trace. Built by src/run-bundle/trace.ts from the
// event log. A leaf: it imports nothing from the rest of src/.

/** Seed 003 ToolCallRecord. `server` is the MCP server, "anthropic" for its server-side web search, null for a built-in. */
export interface ToolCallRecord {
  tool_use_id: string;
  server: string | null;
  tool: string;
  arguments: Record<string, unknown>;
  /** What came back: its text (as the event previews it), whether it was an error, and the tool's details. */
  result: Record<string, unknown> | null;
  error: string | null;
  duration_ms: number | null;
}

/** Seed 003 StepRecord. */
export interface StepRecord {
  step_name: string;
  message: string;
  timestamp: string;
  status: "info" | "warning" | "error";
  agent: string;
  tool_calls: ToolCallRecord[];
  /** From the step's first event to its last. */
  duration_ms: number;
}

/**
 * Seed 003 SubAgentSessionInfo, by session id (the child task's), with Outpost's additions: the delegation it answers
 * and the child's own trace, so a trace is a tree across the task's sub-agents.
 */
export interface SubAgentSessionInfo {
  session_id: string;
  agent: string;
  /** Messages in the child's conversation, as its last recorded step left it. */
  message_count: number;
  status: "running" | "input_required" | "completed" | "failed" | "canceled";
  parent_task_id: string;
  tool_use_id: string;
  task_description: string;
  trace: TraceLog;
}

/** Seed 003 TraceLog. */
export interface TraceLog {
  task_id: string;
  steps: StepRecord[];
  sub_agent_sessions: Record<string, SubAgentSessionInfo>;
  created_at: string;
  updated_at: string;
}
