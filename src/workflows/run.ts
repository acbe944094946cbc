// A workflow's run (seed 003 Workflow, State, Checkpoint): the graph walked node by node on the durable runtime, as
// the workflow agent's execute() (workflow-agent.ts), so the runner, the supervisor, cancel, eviction recovery and
// the bundle are the agents' own. Each node starts at a checkpoint whose position is its id (the State as it was,
// which a fork re-runs the node from), and its work is a journaled step: a replay after an eviction or a wake finds
// the node done and never runs it again. An agent node runs its agent as a child task (the sub-agents' machinery,
// one per round under a key of its own), a tool node calls its tool through the task's Toolbox, a condition node
// picks the first edge whose condition holds, and a human node (or any node listed in `checkpoints`) waits as
// input_required for POST /v1/tasks/:id/resume. The graph is a DAG, so each node runs at most once per run; only a
// pattern iterates, and node executions and pattern rounds together are held to max_iterations.
import type { MessageParam, ToolUseBlock } from "@anthropic-ai/sdk/resources/messages";
import type { AgentContext } from "../agents/context.ts";
import { type AgentResult, successResult } from "../agents/result.ts";
import { decisionKey, type PendingInput } from "../approvals/requests.ts";
import type { AgentRuntime } from "../contracts/runtime.ts";
import type { SubagentHost, SubagentOutcome } from "../contracts/subagents.ts";
import { AwaitingInputError, AwaitingSubagentsError, WorkflowError, WorkflowRunError } from "../errors.ts";
import { ConditionEvaluationError } from "./condition.ts";
import { type AgentNode, SUPERVISOR_FINISH, type ToolNode, type WorkflowNode } from "./definition.ts";
import {
  answerUpdate,
  applyUpdate,
  conditionState,
  messageText,
  PatternRounds,
  type StateUpdate,
  transcript,
  type WorkflowState,
} from "./state.ts";
import type { Workflow } from "./workflow.ts";

/** Where a fork of a workflow checkpoint starts: the node, and the State's fields other than its messages. */
export interface WorkflowStart {
  node: string;
  current_agent: string | null;
  routing_key: string | null;
  metadata: Record<string, unknown>;
}

/** What a node's step returns (and a replay reads back): the update, and the iterations counted so far. */
interface NodeOutcome {
  update: StateUpdate;
  iteration: number;
}

/** The request id of the wait before node `id`: unique in a run, since a node runs at most once. */
export const waitRequestId = (node: string): string => `wf:${node}`;

class WorkflowRun {
  private readonly context: AgentContext;
  private readonly runtime: AgentRuntime;
  private readonly workflow: Workflow;
  private readonly subagents: SubagentHost;
  private readonly maxIterations: number;
  private state: WorkflowState;
  private iteration = 0;

  constructor(context: AgentContext, workflow: Workflow, subagents: SubagentHost, state: WorkflowState) {
    this.context = context;
    this.runtime = context.runtime;
    this.workflow = workflow;
    this.subagents = subagents;
    // The smaller of the workflow's max_iterations and the task's (the workflow agent's maxTurns is the former).
    this.maxIterations = context.config.limits.maxTurns;
    this.state = state;
  }

  async run(entry: string): Promise<AgentResult> {
    let node: string | null = entry;
    while (node !== null) {
      await this.runNode(node);
      node = await this.next(node);
    }
    const last = this.state.messages.at(-1);
    return successResult(last ? messageText(last) : "", this.runtime.usage(), { iterations: this.iteration });
  }

  private async runNode(id: string): Promise<void> {
    const spec = this.spec(id);
    this.count(id);
    const waits = spec.type === "human" || this.workflow.definition.checkpoints.includes(id);
    // Seed 003 Checkpoint: the State on entering the node; a wait for a person is this checkpoint, awaiting_human.
    this.runtime.checkpoint(id, "run_node", this.state.metadata, waits, {
      current_agent: this.state.current_agent ?? this.workflow.name,
      routing_key: this.state.routing_key,
    });
    const started = this.iteration;
    await this.runtime.step(`wf:node:${id}:started`, async () => {
      this.runtime.emit("workflow_node_started", { node: id, type: spec.type, iteration: started });
      return started;
    });
    if (waits) {
      const decided = await this.runtime.step(`wf:wait:${id}`, async () => this.awaitPerson(id, spec));
      this.apply(decided);
    }
    const outcome =
      spec.type === "human"
        ? { update: {}, iteration: this.iteration }
        : await this.runtime.step(`wf:node:${id}`, async (info): Promise<NodeOutcome> => {
            const update = await this.execute(id, spec, info);
            return { update, iteration: this.iteration };
          });
    this.iteration = outcome.iteration;
    this.apply(outcome.update);
    const after = this.state;
    await this.runtime.step(`wf:node:${id}:completed`, async () => {
      this.runtime.emit("workflow_node_completed", {
        node: id,
        type: spec.type,
        iteration: outcome.iteration,
        current_agent: after.current_agent,
        routing_key: after.routing_key,
        message_count: after.messages.length,
      });
      return true;
    });
  }

  /** What node `id` does; the State is updated with what it returns once its step has completed. */
  private async execute(
    id: string,
    spec: WorkflowNode,
    info: { attempt: number; spanId: string },
  ): Promise<StateUpdate> {
    switch (spec.type) {
      case "agent":
        if (spec.pattern === "reflection") return this.reflection(id, spec);
        if (spec.pattern === "supervisor") return this.supervisor(id, spec);
        return answerUpdate(spec.agent, await this.delegate(id, `wf:${id}:1:${spec.agent}`, spec.agent, this.state));
      case "tool":
        return this.callTool(id, spec, info);
      case "condition":
      case "human":
        return {};
    }
  }

  /** Seed 003 reflection: the agent drafts, the critic critiques, the agent revises, until `until` or max_rounds. */
  private async reflection(id: string, spec: AgentNode): Promise<StateUpdate> {
    const critic = spec.critic as string;
    const until = this.workflow.untilCondition(id);
    const rounds = spec.max_rounds ?? 3;
    const done = new PatternRounds(this.state);
    for (let round = 1; round <= rounds; round++) {
      if (round > 1) this.count(id);
      const ask =
        round === 1
          ? done.state
          : withNote(done.state, `Revise your draft (round ${round} of ${rounds}) as the critique says.`);
      done.add(answerUpdate(spec.agent, await this.delegate(id, `wf:${id}:${round}:draft`, spec.agent, ask)));
      const review = withNote(done.state, `Critique the latest draft (round ${round} of ${rounds}).`);
      done.add(answerUpdate(critic, await this.delegate(id, `wf:${id}:${round}:critique`, critic, review)));
      if (until && this.holds(id, until, done.state)) break;
    }
    return done.update;
  }

  /** Seed 003 supervisor: the router (the node's agent) names the next worker by routing_key, until `finish`. */
  private async supervisor(id: string, spec: AgentNode): Promise<StateUpdate> {
    const workers = spec.workers ?? [];
    const rounds = spec.max_rounds ?? this.maxIterations;
    const done = new PatternRounds(this.state);
    for (let round = 1; round <= rounds; round++) {
      if (round > 1) this.count(id);
      const note =
        `Choose who works next: answer with one of ${[...workers, SUPERVISOR_FINISH].join(", ")} and nothing else ` +
        `(${SUPERVISOR_FINISH} when the work is done). Round ${round} of ${rounds}.`;
      const answer = await this.delegate(id, `wf:${id}:${round}:route`, spec.agent, withNote(done.state, note));
      const key = routingKey(answer);
      done.add({ routing_key: key, current_agent: spec.agent });
      if (key === SUPERVISOR_FINISH) break;
      if (!workers.includes(key)) {
        throw new WorkflowRunError(
          "workflow_node_failed",
          `Node "${id}": the router ${spec.agent} answered ${JSON.stringify(key)}, which is none of ${[...workers, SUPERVISOR_FINISH].join(", ")}.`,
        );
      }
      done.add(answerUpdate(key, await this.delegate(id, `wf:${id}:${round}:${key}`, key, done.state)));
    }
    return done.update;
  }

  /** A tool node: one call through the task's Toolbox, recorded as a tool call and its result. */
  private async callTool(id: string, spec: ToolNode, info: { attempt: number; spanId: string }): Promise<StateUpdate> {
    const use = { type: "tool_use", id: `wf_${id}`, name: spec.tool, input: spec.arguments } as ToolUseBlock;
    const result = await this.context.tools.call(use, this.iteration, info);
    if (result.is_error) {
      const text = typeof result.content === "string" ? result.content : "the tool returned an error";
      throw new WorkflowRunError("workflow_node_failed", `Node "${id}": ${spec.tool} failed: ${text}`);
    }
    const messages: MessageParam[] = [
      { role: "assistant", content: [{ type: "tool_use", id: use.id, name: use.name, input: use.input }] },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: use.id, content: result.content, is_error: false }],
      },
    ];
    return { messages };
  }

  /**
   * Runs `agent` on `state` as a child task under `key`, a journaled step of its own: started once (the key names
   * the child), and until it has ended the run stops, holding nothing, and the child's end wakes it.
   */
  private async delegate(node: string, key: string, agent: string, state: WorkflowState): Promise<string> {
    const outcome = await this.runtime.step(key, async (): Promise<SubagentOutcome> => {
      await this.subagents.start({
        tool_use_id: key,
        agent,
        description: `workflow ${this.workflow.name}, node ${node}`,
        prompt: transcript(state),
      });
      const record = this.subagents.get(key);
      if (record?.outcome) return record.outcome;
      throw new AwaitingSubagentsError(`Workflow node ${node} waits for its agent ${agent}.`);
    });
    if (outcome.is_error) {
      throw new WorkflowRunError("workflow_node_failed", `Node "${node}": agent ${agent}: ${outcome.summary}`);
    }
    return outcome.summary;
  }

  /** The wait before node `id`: the decision on its request, or the run stops as input_required until there is one. */
  private awaitPerson(id: string, spec: WorkflowNode): StateUpdate {
    const requestId = waitRequestId(id);
    const decision = this.runtime.taskState.get(decisionKey(requestId));
    if (!decision) {
      const prompt = spec.type === "human" ? (spec.prompt ?? null) : null;
      const pending: PendingInput = {
        kind: "approval",
        request_id: requestId,
        tool_use_id: requestId,
        tool_name: id,
        input: { node: id, type: spec.type, prompt },
        question: null,
        requested_at: new Date().toISOString(),
        expires_at: null,
        reason:
          prompt ??
          `The workflow ${this.workflow.name} waits for a person before node "${id}": approve, reject, or modify the State (state_updates).`,
        turn_index: this.iteration,
      };
      throw new AwaitingInputError(`Workflow node ${id} waits for a person.`, pending);
    }
    if (decision.action === "reject" || decision.action === "fail") {
      const why = decision.message ? `: ${decision.message}` : ".";
      throw new WorkflowRunError("workflow_rejected", `A person rejected the run at node "${id}"${why}`);
    }
    // Seed 003 human feedback: the person's messages are appended (the answer's message last), metadata replaces.
    const messages: MessageParam[] = (decision.state_updates?.messages ?? []).map((m) => ({
      role: "user",
      content: m.content,
    }));
    if (decision.message) messages.push({ role: "user", content: decision.message });
    const updates = decision.state_updates;
    return {
      messages,
      ...(updates?.metadata ? { metadata: updates.metadata } : {}),
      ...(updates?.routing_key !== undefined ? { routing_key: updates.routing_key } : {}),
    };
  }

  /** The node after `id`: the first of its edges whose condition holds (its only edge, for other nodes), or none. */
  private async next(id: string): Promise<string | null> {
    const taken = await this.runtime.step(`wf:edge:${id}`, async () => {
      const edges = this.workflow.definition.edges.flatMap((edge, index) =>
        edge.from === id ? [{ edge, index }] : [],
      );
      if (edges.length === 0) return null;
      for (const { edge, index } of edges) {
        const condition = this.workflow.edgeCondition(index);
        if (condition && !this.holds(id, condition, this.state)) continue;
        this.runtime.emit("workflow_edge_taken", {
          from: id,
          to: edge.to,
          edge_index: index,
          condition: edge.condition ?? null,
        });
        return edge.to;
      }
      throw new WorkflowRunError("workflow_node_failed", `Node "${id}": none of its edges' conditions holds.`);
    });
    return taken;
  }

  private holds(
    id: string,
    condition: { evaluate(state: ReturnType<typeof conditionState>): boolean },
    state: WorkflowState,
  ) {
    try {
      return condition.evaluate(conditionState(state));
    } catch (error) {
      if (error instanceof ConditionEvaluationError) {
        throw new WorkflowRunError("workflow_node_failed", `Node "${id}": ${error.message}`);
      }
      throw error;
    }
  }

  /** One more node execution or pattern round; past max_iterations the run fails. */
  private count(id: string): void {
    this.iteration++;
    if (this.iteration > this.maxIterations) {
      throw new WorkflowRunError(
        "max_iterations",
        `max_iterations reached (${this.maxIterations} node executions and pattern rounds) at node "${id}"; raise the workflow's max_iterations.`,
      );
    }
  }

  /** Applies a node's update and records the messages it appended (by index, so a replay records nothing twice). */
  private apply(update: StateUpdate): void {
    const from = this.state.messages.length;
    this.state = applyUpdate(this.state, update);
    for (let index = from; index < this.state.messages.length; index++) {
      this.runtime.recordMessage(index, this.state.messages[index] as MessageParam);
    }
  }

  private spec(id: string): WorkflowNode {
    const spec = this.workflow.definition.nodes[id];
    if (!spec) throw new WorkflowError(`The workflow ${this.workflow.name} has no node "${id}".`);
    return spec;
  }
}

/** The State with a note for the next agent after it (not recorded: it is only part of that agent's prompt). */
function withNote(state: WorkflowState, note: string): WorkflowState {
  return { ...state, messages: [...state.messages, { role: "user", content: note }] };
}

/** A router's answer as a routing_key: a JSON answer's `routing_key`, else its first word, lowercased. */
function routingKey(answer: string): string {
  const steered = answerUpdate("router", answer).routing_key;
  if (typeof steered === "string") return steered;
  return (answer.trim().split(/\s+/)[0] ?? "").replace(/[^A-Za-z0-9_]/g, "").toLowerCase();
}

/**
 * Runs `workflow` for the task of `context`: from its entry point with the task's input and metadata, or from a
 * fork's node with the State there. The State's first fields are a journaled step, so a resume that replaced the
 * task's metadata meanwhile does not change a replay.
 */
export async function runWorkflow(
  context: AgentContext,
  workflow: Workflow,
  from?: WorkflowStart,
): Promise<AgentResult> {
  const subagents = context.subagents;
  if (!subagents) throw new WorkflowError("A workflow's run needs the task's sub-agents to run its agent nodes.");
  const { runtime } = context;
  if (from) {
    const state: WorkflowState = {
      messages: context.startFrom?.messages ?? [{ role: "user", content: context.input }],
      current_agent: from.current_agent,
      routing_key: from.routing_key,
      metadata: from.metadata,
    };
    return new WorkflowRun(context, workflow, subagents, state).run(from.node);
  }
  const metadata = await runtime.step("wf:start", async () => ({ ...context.extra }));
  const first: MessageParam = { role: "user", content: context.input };
  runtime.recordMessage(0, first);
  const state: WorkflowState = { messages: [first], current_agent: null, routing_key: null, metadata };
  return new WorkflowRun(context, workflow, subagents, state).run(workflow.definition.entry_point);
}
