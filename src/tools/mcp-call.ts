// One MCP tool call (seed 003 fallback_tools): the call with its timeout, then its fallback tools in order while
// calls fail to produce a result (a timeout, a lost or refused connection). A result the tool itself marks is_error
// is its answer and goes to the model as is; once a call has run on the server, no fallback runs in its place. The
// completed call becomes seed 002's StepExecutionResult: its text and large structured content go to the run
// bundle, and the model gets a capped result.
import type { ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import type { EventPayload } from "../contracts/events.ts";
import type { StepInfo, ToolRuntime } from "../contracts/runtime.ts";
import { parseMcpToolName } from "../contracts/tool-names.ts";
import type { ToolResult } from "../contracts/tool-result.ts";
import { toErrorInfo } from "../errors.ts";
import { type McpServerSpec, toolSettings } from "../mcp/config.ts";
import { toMcpCallResult, toToolResult } from "../mcp/content.ts";
import type { McpSession } from "../mcp/session.ts";
import type { McpCatalog } from "./mcp-catalog.ts";
import { capResult } from "./result-cap.ts";

/** Characters of a result the events preview. */
const PREVIEW_CHARS = 500;
/** Structured content larger than this goes to the run bundle; its event carries a preview. */
const MAX_EVENT_STRUCTURED_CHARS = 64 * 1024;

/** What every mcp_tool_call_* event of one call says about it. */
type McpCallFields = Omit<EventPayload<"mcp_tool_call_started">, "arguments" | "timeout_seconds">;
type RawResult = Awaited<ReturnType<McpSession["callTool"]>>;

/** The run's MCP servers as the Toolbox opened them. */
export interface McpCallContext {
  runtime: ToolRuntime;
  servers: readonly McpServerSpec[];
  sessions: ReadonlyMap<string, McpSession>;
  catalog: McpCatalog;
  /** The MCP client module, loaded when the sessions were opened. */
  mcp: typeof import("../mcp/session.ts") | null;
  /** The idempotency key of calling `toolName` for one tool_use (the Toolbox derives it). */
  idempotencyKey: (toolUseId: string, toolName: string) => Promise<string>;
  /** Whether `name` may stand in for a failed call: allowed, and needing no person's approval. */
  mayStandIn: (name: string) => boolean;
}

/** The tool_use's call, then its fallbacks; an is_error result when none produced one. */
export async function callMcpTool(
  context: McpCallContext,
  use: ToolUseBlock,
  turnIndex: number,
  info: StepInfo,
  position: number,
): Promise<ToolResult> {
  const { runtime } = context;
  const primary = parseMcpToolName(use.name);
  const spec = context.servers.find((s) => s.name === primary?.server);
  const fallbacks = spec && primary ? toolSettings(spec, primary.tool).fallbackTools : [];
  // A fallback that would need a person's approval is not used in place of an approved (or allowed) call.
  const attempts = [use.name, ...fallbacks.filter((name) => context.mayStandIn(name))];
  const args = isRecord(use.input) ? use.input : {};
  const failures: string[] = [];
  for (const [index, name] of attempts.entries()) {
    const target = parseMcpToolName(name);
    const session = target ? context.sessions.get(target.server) : undefined;
    const targetSpec = context.servers.find((s) => s.name === target?.server);
    if (!target || !session || !targetSpec) {
      failures.push(`${name}: not an MCP tool of this agent`);
      continue;
    }
    const timeoutSeconds = toolSettings(targetSpec, target.tool).timeoutSeconds;
    const event = {
      step_id: use.id,
      turn_index: turnIndex,
      tool_name: name,
      server: target.server,
      attempt: info.attempt,
      ...(index > 0 ? { fallback_for: use.name, fallback_index: index } : {}),
    };
    runtime.emit("mcp_tool_call_started", { ...event, arguments: args, timeout_seconds: timeoutSeconds }, info.spanId);
    const started = Date.now();
    let raw: RawResult;
    try {
      raw = await session.callTool(target.tool, args, {
        timeoutMs: timeoutSeconds * 1000,
        signal: runtime.signal,
        idempotencyKey: await context.idempotencyKey(use.id, name),
      });
    } catch (error) {
      if (runtime.signal.aborted) throw error;
      const failure = context.mcp?.describeCallFailure(error, timeoutSeconds) ?? toErrorInfo(error);
      runtime.emit(
        "mcp_tool_call_failed",
        { ...event, error: failure, duration_ms: Date.now() - started },
        info.spanId,
      );
      failures.push(`${name}: ${failure.message}`);
      continue;
    }
    // The call ran on the server: from here on no fallback runs in its place, whatever goes wrong.
    return mcpOutcome(context, { raw, event, target, use, turnIndex, position, index, started, spanId: info.spanId });
  }
  return {
    content:
      `Tool "${use.name}" failed and returned no result. ${failures.join(" Then ")} ` +
      "You can retry later, use another tool, or continue without it.",
    is_error: true,
  };
}

/** A completed MCP call as the log, the run bundle and the model see it (seed 002 StepExecutionResult). */
async function mcpOutcome(
  context: McpCallContext,
  call: {
    raw: RawResult;
    event: McpCallFields;
    target: { server: string; tool: string };
    use: ToolUseBlock;
    turnIndex: number;
    position: number;
    index: number;
    started: number;
    spanId: string;
  },
): Promise<ToolResult> {
  const { runtime } = context;
  const { raw, event, target, turnIndex, index, started, spanId } = call;
  const schema = context.catalog.servers[target.server]?.tools.find((t) => t.name === target.tool)?.output_schema;
  try {
    context.mcp?.checkStructuredOutput(schema, raw);
  } catch (error) {
    // A result that breaks the tool's own output schema is an error result, not a reason to call another tool.
    const failure = context.mcp?.describeCallFailure(error, 0) ?? toErrorInfo(error);
    runtime.emit("mcp_tool_call_failed", { ...event, error: failure, duration_ms: Date.now() - started }, spanId);
    return { content: `Tool "${call.use.name}" returned an invalid result: ${failure.message}`, is_error: true };
  }
  const result = toMcpCallResult(target.server, target.tool, raw);
  // Seed 002: an MCP call maps to a StepExecutionResult, its text saved as turn_<n>_step-<k>_mcp_stdout.txt.
  const stepLabel = `step-${call.position}`;
  let artifact = result.raw_text ? `artifacts/turn_${turnIndex}_${stepLabel}_mcp_stdout.txt` : null;
  const structured = raw.structuredContent === undefined ? null : raw.structuredContent;
  const structuredJson = structured === null ? "" : JSON.stringify(structured);
  const structuredArtifact =
    structuredJson.length > MAX_EVENT_STRUCTURED_CHARS
      ? `artifacts/turn_${turnIndex}_${stepLabel}_mcp_structured.json`
      : null;
  try {
    if (artifact) await runtime.artifact(artifact, result.raw_text);
    if (structuredArtifact) await runtime.artifact(structuredArtifact, structuredJson);
  } catch (error) {
    // The bundle is a record; failing to write it must not make a call that ran look like one that did not.
    console.error("MCP result artifact not written:", error instanceof Error ? error.message : error);
    artifact = null;
  }
  const stepResult: EventPayload<"mcp_tool_call_completed">["step_result"] = {
    step_id: stepLabel,
    exit_code: result.is_error ? 1 : 0,
    stdout_summary: result.raw_text.slice(0, PREVIEW_CHARS),
    stderr_summary: "",
    retry_count: index,
    status: result.is_error ? "failed" : "success",
    stdout_artifact: artifact,
    stderr_artifact: null,
  };
  runtime.emit(
    "mcp_tool_call_completed",
    {
      ...event,
      status: result.is_error ? "error" : "success",
      is_error: result.is_error,
      output_preview: result.raw_text.slice(0, PREVIEW_CHARS),
      // Large structured content is kept in the bundle; the event stays well inside a storage row.
      structured_content: structuredArtifact
        ? { truncated: true, preview: structuredJson.slice(0, PREVIEW_CHARS), artifact: structuredArtifact }
        : structured,
      step_result: stepResult,
      duration_ms: Date.now() - started,
    },
    spanId,
  );
  return capResult(toToolResult(raw), artifact);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
