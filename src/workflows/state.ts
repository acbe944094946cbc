// A workflow run's State (seed 003 State): the conversation (`messages`, the append reducer), the agent that ran last
// (`current_agent`), the key conditions and a supervisor route by (`routing_key`), and `metadata`, each replaced
// whole when a node sets it. What a node did is a StateUpdate, applied by one reducer; what a condition sees of the
// State, and the prompts the agent nodes' child tasks are given, are derived from it here.
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import type { ConditionState } from "./condition.ts";

export interface WorkflowState {
  messages: MessageParam[];
  current_agent: string | null;
  routing_key: string | null;
  metadata: Record<string, unknown>;
}

/** What a node did to the State: messages to append; the other fields, when present, replace the State's. */
export interface StateUpdate {
  messages?: MessageParam[];
  current_agent?: string | null;
  routing_key?: string | null;
  metadata?: Record<string, unknown>;
}

/** Seed 003 rule 4: `messages` append, every other field replaces. */
export function applyUpdate(state: WorkflowState, update: StateUpdate): WorkflowState {
  return {
    messages: [...state.messages, ...(update.messages ?? [])],
    current_agent: update.current_agent !== undefined ? update.current_agent : state.current_agent,
    routing_key: update.routing_key !== undefined ? update.routing_key : state.routing_key,
    metadata: update.metadata !== undefined ? update.metadata : state.metadata,
  };
}

/** Two updates as one (the second's messages after the first's; its other fields win). */
export function mergeUpdates(first: StateUpdate, second: StateUpdate): StateUpdate {
  return {
    ...first,
    ...second,
    messages: [...(first.messages ?? []), ...(second.messages ?? [])],
  };
}

/** A pattern's rounds within one node: the State as they leave it, and the one update they make together. */
export class PatternRounds {
  state: WorkflowState;
  update: StateUpdate = {};

  constructor(start: WorkflowState) {
    this.state = start;
  }

  add(more: StateUpdate): void {
    this.state = applyUpdate(this.state, more);
    this.update = mergeUpdates(this.update, more);
  }
}

/** The State as a condition sees it (src/workflows/condition.ts). */
export function conditionState(state: WorkflowState): ConditionState {
  const last = state.messages.at(-1);
  return {
    routing_key: state.routing_key,
    current_agent: state.current_agent,
    last_message: last ? messageText(last) : "",
    metadata: state.metadata,
  };
}

/** A message's text: its text blocks joined, and a tool call or result written out. */
export function messageText(message: MessageParam): string {
  if (typeof message.content === "string") return message.content;
  return message.content
    .map((block) => {
      if (block.type === "text") return block.text;
      if (block.type === "tool_use") return `(called ${block.name} with ${JSON.stringify(block.input)})`;
      if (block.type === "tool_result") {
        const content = block.content;
        if (typeof content === "string") return content;
        return (content ?? []).map((part) => (part.type === "text" ? part.text : `(${part.type})`)).join("\n");
      }
      return "";
    })
    .filter((text) => text !== "")
    .join("\n");
}

/**
 * What an agent node's answer does to the State: it is appended as the agent's message, and it becomes
 * `current_agent`. An answer that is a JSON object may also set `routing_key` (a string) and `metadata` (an object,
 * replacing the State's), which is how an agent steers the conditions after it.
 */
export function answerUpdate(agent: string, answer: string): StateUpdate {
  const update: StateUpdate = {
    messages: [{ role: "assistant", content: [{ type: "text", text: answer }] }],
    current_agent: agent,
  };
  const steer = steering(answer);
  if (typeof steer?.routing_key === "string") update.routing_key = steer.routing_key;
  if (isObject(steer?.metadata)) update.metadata = steer.metadata;
  return update;
}

/** The JSON object an answer is, if it is one (a fenced ```json block counts). */
function steering(answer: string): Record<string, unknown> | null {
  const fenced = /^```(?:json)?\s*([\s\S]*?)\s*```$/.exec(answer.trim());
  const text = fenced?.[1] ?? answer.trim();
  if (!text.startsWith("{")) return null;
  try {
    const value: unknown = JSON.parse(text);
    return isObject(value) ? value : null;
  } catch {
    return null;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * The conversation so far as a child task's prompt: the task first, then what the workflow's nodes have said, in
 * order. A child sees only its prompt (seed 003's isolation guarantee), so this is all it knows of the run.
 */
export function transcript(state: WorkflowState): string {
  const [first, ...rest] = state.messages;
  const task = first ? messageText(first) : "";
  if (rest.length === 0) return task;
  const steps = rest.map((message) => `[${message.role}]\n${messageText(message)}`).join("\n\n");
  return `${task}\n\n## The work so far\n\n${steps}`;
}
