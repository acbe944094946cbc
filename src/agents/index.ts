// What an agent author imports: the Agent base class and its definition, the skill agent, the registry, results,
// text extraction, and the types an agent's execute() receives. The example agents (examples/) use only this, as an
// agent of your own would. Explicit names, no `export *`: this list is the public surface of src/agents.
export type { CustomEventType, EventPayload, EventType } from "../contracts/events.ts";
export type { AgentMessage, AgentRuntime, ModelCallOptions, RunLimits, StepInfo } from "../contracts/runtime.ts";
export type { ToolResult } from "../contracts/tool-result.ts";
export type { AgentUsage } from "../contracts/usage.ts";
export { Agent } from "./agent.ts";
export type { AgentConfiguration, AgentContext } from "./context.ts";
export { AGENT_NAME_PATTERN, type AgentDefinition } from "./definition.ts";
export { dryRunResult } from "./model-request.ts";
export { type AgentClass, AgentRegistry } from "./registry.ts";
export { type AgentResult, failureResult, successResult } from "./result.ts";
export { SkillAgent, type SkillAgentDefinition } from "./skill-agent.ts";
export { extractAllText, extractText } from "./text.ts";
