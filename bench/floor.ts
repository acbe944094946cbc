// The floor: the same 3-turn tool loop with nothing but the Anthropic SDK in Node, against the same emulator and
// script. The same request as the planner agent's (built by the same modelRequest), the same TodoWrite
// implementation, streamed calls (messages.stream().finalMessage()), and no persistence, events or HTTP API in between.
// The workerd floor (bench/workerd-floor/) runs this same loop inside a Durable Object.
import Anthropic from "@anthropic-ai/sdk";
import type { MessageParam, ToolResultBlockParam } from "@anthropic-ai/sdk/resources/messages";
import type { RequestRecord } from "../emulator/server.ts";
import { registry } from "../src/agents/catalog.ts";
import { modelRequest, toParams } from "../src/agents/model-request.ts";
import { resolveModel } from "../src/config/models.ts";
import type { AgentRuntime } from "../src/contracts/runtime.ts";
import type { StateKey } from "../src/lib/state-key.ts";
import { outboundPolicy } from "../src/net/outbound.ts";
import { Toolbox } from "../src/tools/toolbox.ts";
import type { Workspace } from "../src/workspace/workspace.ts";
import { AGENT, MARKER, MODEL_TURNS } from "./config.ts";

export interface FloorRun {
  runId: string;
  wallMs: number;
}

export interface FloorSample {
  runId: string;
  wallMs: number;
  serviceMs: number;
  overheadPerTurnMs: number;
  modelCalls: number;
}

export function createFloorClient(emulatorUrl: string): Anthropic {
  return new Anthropic({ apiKey: "bench", baseURL: emulatorUrl, maxRetries: 0 });
}

/** A runtime that gives a built-in tool what it touches (state, emit) and nothing durable. */
function bareRuntime(signal: AbortSignal): AgentRuntime {
  const state = new Map<string, unknown>();
  return {
    signal,
    state: {
      get: <T>(key: string) => state.get(key) as T | undefined,
      put: (key, value) => {
        state.set(key, value);
      },
    },
    taskState: {
      get: <T>(key: StateKey<T>) => state.get(key.name) as T | undefined,
      put: (key, value) => {
        state.set(key.name, value);
      },
    },
    step: (_name, fn) => fn({ attempt: 1, spanId: "0" }),
    streamModel: () => {
      throw new Error("the floor calls the SDK itself");
    },
    recordMessage: () => {},
    annotateTranscript: () => {},
    artifact: async () => {},
    checkpoint: () => {},
    emit: () => {},
    usage: () => {
      throw new Error("not tracked by the floor");
    },
  };
}

export interface FloorOptions {
  /** What the first message starts with: the emulator answers with the script it matches (default: the 3-turn task). */
  marker?: string;
  /** Called with each message as the conversation grows (the workerd floor stores it), before the next call. */
  onMessage?: (message: MessageParam, index: number) => void;
}

export async function runFloorTask(client: Anthropic, runId: string, options: FloorOptions = {}): Promise<FloorRun> {
  const agent = registry.create(AGENT);
  const runtime = bareRuntime(new AbortController().signal);
  const toolbox = new Toolbox(agent.toolDeclaration(), {
    taskId: runId,
    runtime,
    secret: () => undefined,
    outbound: outboundPolicy(undefined),
    // The benchmark's agent (planner) uses TodoWrite only; it never touches a workspace.
    workspace: new Proxy({} as Workspace, {
      get() {
        throw new Error("the floor has no workspace");
      },
    }),
    // The floor is a bare loop: nothing of it is stored, so there is nothing to redact.
    redactor: { text: (text) => text },
  });
  const tools = toolbox.definitions();
  const messages: MessageParam[] = [];
  const add = (message: MessageParam) => {
    messages.push(message);
    options.onMessage?.(message, messages.length - 1);
  };
  add({ role: "user", content: `${options.marker ?? MARKER} floor ${runId}: plan a small project.` });
  const t0 = performance.now();
  for (let turn = 1; turn <= agent.maxTurns; turn++) {
    const request = modelRequest({
      model: resolveModel(agent.model, undefined),
      maxTokens: agent.maxTokens,
      system: agent.systemPrompt,
      messages,
      tools,
    });
    const message = await client.messages.stream(request, { headers: { "x-outpost-task-id": runId } }).finalMessage();
    add({ role: "assistant", content: toParams(message.content) });
    const uses = message.content.filter((block) => block.type === "tool_use");
    if (uses.length === 0) {
      if (turn !== MODEL_TURNS) throw new Error(`floor run ${runId}: ended after ${turn} turns`);
      return { runId, wallMs: performance.now() - t0 };
    }
    const results: ToolResultBlockParam[] = [];
    for (const [index, use] of uses.entries()) {
      const result = await toolbox.call(use, turn, { attempt: 1, spanId: "0" }, index + 1);
      if (result.is_error) throw new Error(`floor run ${runId}: ${use.name} failed: ${result.content}`);
      results.push({ type: "tool_result", tool_use_id: use.id, content: result.content, is_error: false });
    }
    add({ role: "user", content: results });
  }
  throw new Error(`floor run ${runId}: hit max turns`);
}

export function floorSample(run: FloorRun, records: readonly RequestRecord[]): FloorSample {
  const mine = records.filter((r) => r.task_id === run.runId);
  const serviceMs = mine.reduce((sum, r) => sum + r.service_ms, 0);
  if (mine.length !== MODEL_TURNS) throw new Error(`floor run ${run.runId}: ${mine.length} model calls recorded`);
  return {
    runId: run.runId,
    wallMs: run.wallMs,
    serviceMs,
    overheadPerTurnMs: (run.wallMs - serviceMs) / MODEL_TURNS,
    modelCalls: mine.length,
  };
}
