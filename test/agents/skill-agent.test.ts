// The skill agent's decision loop (seed 002), run over HTTP against the model emulator: a scripted multi-turn run
// with its full event sequence and run directory, decode failures, native tool calls, step retries, self-handoff,
// a failed synthesis, and an eviction in the middle.
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { registry } from "../../src/agents/catalog.ts";
import { SkillAgent } from "../../src/agents/skill-agent.ts";
import { ArtifactListSchema, TaskResourceSchema } from "../../src/http/responses.ts";
import {
  api,
  apiJson,
  type EventBody,
  events,
  fireTimers,
  modelRequest,
  ofType,
  parseBody,
  pendingRequestId,
  type ScriptTurn,
  script,
  startTask,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const decision = (value: Record<string, unknown>): ScriptTurn => ({
  content: [{ type: "text", text: `\`\`\`json\n${JSON.stringify(value)}\n\`\`\`` }],
});
const finish = (result: string) => decision({ planned_actions: [{ type: "finish", params: { result } }] });
const answer = (text: string): ScriptTurn => ({ content: [{ type: "text", text }] });

async function run(agent: string, label: string, turns: ScriptTurn[], input = "do it") {
  const marker = uniqueMarker(label);
  await script(marker, turns);
  const task = await startTask(agent, `${input} ${marker}`);
  const done = await waitForTask(task.id, 30);
  return { task: done, log: await events(task.id), marker };
}

const types = (log: EventBody[]) => log.map((e) => e.event_type);

describe("the skill agent", () => {
  it("chooses a skill, reads what it asks for, acts, and synthesizes the answer, with seed 002's events", async () => {
    const { task, log } = await run(
      "operator",
      "skill-run",
      [
        decision({
          selected_skill: "release-notes",
          reasoning_summary: "Release notes are asked for.",
          required_disclosure_paths: ["release-notes/template.md"],
          planned_actions: [{ type: "call_skill", params: { skill_name: "release-notes" } }],
        }),
        decision({
          selected_skill: "release-notes",
          planned_actions: [
            { type: "run_command", params: { command: "printf 'Fixed the login page\\n' > notes.md" } },
          ],
        }),
        finish("Fixed the login page."),
        answer("## 2.4 — 2026-11-22\n\n### Fixes\n- Fixed the login page.\n\n1 change."),
      ],
      "Write the release notes for 2.4",
    );
    expect(task.status).toBe("completed");
    expect(task.result).toBe("## 2.4 — 2026-11-22\n\n### Fixes\n- Fixed the login page.\n\n1 change.");
    const sequence = types(log).filter((t) => !["llm_text_delta", "checkpoint_saved"].includes(t));
    expect(sequence).toEqual([
      "task_created",
      "run_started",
      "skill_catalog_loaded",
      "skill_prefilter_completed",
      "prompt_budget_computed",
      "prompt_composed",
      "llm_request_sent",
      "llm_response_received",
      "llm_decision_decoded",
      "skill_disclosure_loaded",
      "skill_invocation_started",
      "skill_disclosure_loaded",
      "skill_invocation_finished",
      "prompt_budget_computed",
      "prompt_composed",
      "llm_request_sent",
      "llm_response_received",
      "llm_decision_decoded",
      "skill_invocation_started",
      "tool_call_started",
      "tool_call_completed",
      "skill_step_executed",
      "skill_invocation_finished",
      "prompt_budget_computed",
      "prompt_composed",
      "llm_request_sent",
      "llm_response_received",
      "llm_decision_decoded",
      "final_answer_synthesis_started",
      "llm_request_sent",
      "llm_response_received",
      "final_answer_synthesis_completed",
      "run_finished",
    ]);
    expect(ofType(log, "skill_catalog_loaded")[0]?.payload).toMatchObject({ skills_count: 2, skills_dir: "skills/" });
    expect(ofType(log, "skill_prefilter_completed")[0]?.payload.candidates).toEqual(
      expect.arrayContaining([expect.objectContaining({ name: "release-notes" })]),
    );
    const [files, instructions] = ofType(log, "skill_disclosure_loaded");
    expect(files?.payload).toMatchObject({ stage: "skill_files", paths: ["release-notes/template.md"] });
    expect(instructions?.payload).toMatchObject({ stage: "skill_instructions", paths: ["release-notes/SKILL.md"] });
    expect(ofType(log, "llm_decision_decoded")[0]?.payload).toMatchObject({
      success: true,
      selected_skill: "release-notes",
      response_kind: "skill_call",
    });
    expect(ofType(log, "llm_decision_decoded")[1]?.payload.response_kind).toBe("tool_call");
    expect(ofType(log, "skill_step_executed")[0]?.payload).toMatchObject({
      type: "run_command",
      status: "success",
      command: "printf 'Fixed the login page\\n' > notes.md",
    });
    const budget = ofType(log, "prompt_budget_computed")[0]?.payload;
    expect(budget).toMatchObject({ max_context_tokens: 200_000, response_headroom_tokens: 4096 });
    expect(Number(budget?.allocated_disclosure_tokens)).toBeGreaterThan(190_000);
    expect(ofType(log, "prompt_composed")[0]?.payload.prompt_hash).toMatch(/^[0-9a-f]{64}$/);
    // The model saw the skill's instructions and the file it asked for on the next turn, and nothing it did not ask for.
    const second = JSON.stringify((await modelRequest(task.id, 2)).messages);
    expect(second).toContain("## release-notes/SKILL.md");
    expect(second).toContain("## release-notes/template.md");
    expect(second).not.toContain("release-notes/style.md\\n");
    expect(second).not.toContain("# House style");
    // The run directory of seed 002.
    const artifacts = await apiJson(`/v1/tasks/${task.id}/artifacts`, ArtifactListSchema);
    expect(artifacts.artifacts.map((a) => a.path)).toEqual(
      expect.arrayContaining([
        "events.jsonl",
        "llm_transcript.log",
        "final_summary.md",
        "artifacts/llm/decision_loop_turn_1_attempt_1_request.txt",
        "artifacts/llm/decision_loop_turn_3_attempt_1_response.txt",
        "artifacts/llm/final_answer_synthesis_turn_4_attempt_1_request.txt",
        "artifacts/final_answer_prompt_turn_4.txt",
      ]),
    );
    expect(await (await api(`/v1/tasks/${task.id}/artifacts/final_summary.md`)).text()).toContain(
      "Fixed the login page.",
    );
    expect(await (await api(`/v1/tasks/${task.id}/workspace/notes.md`)).text()).toBe("Fixed the login page\n");
  });

  it("recovers from an answer it cannot decode, and takes the text as the answer after two in a row", async () => {
    const once = await run("operator", "skill-decode-once", [
      answer("I would write the notes now."),
      finish("Done."),
      answer("Final."),
    ]);
    expect(once.task.result).toBe("Final.");
    expect(ofType(once.log, "llm_decision_decoded").map((e) => e.payload.success)).toEqual([false, true]);
    expect(ofType(once.log, "llm_decision_decoded")[0]?.payload.error).toBe("the answer holds no JSON object");
    const retry = JSON.stringify((await modelRequest(once.task.id, 2)).messages);
    expect(retry).toContain("could not be decoded");
    // Seed 002 LlmTranscriptRecord: the failed decode is on record as such, with the skill runtime's fields.
    const transcript = await (await api(`/v1/tasks/${once.task.id}/artifacts/llm_transcript.log`)).text();
    expect(transcript).toContain("=== decision_loop turn 1 attempt 1 · anthropic/claude-sonnet-5-5 · decode_failed");
    expect(transcript).toContain('"decode_success":false');
    expect(transcript).toContain('"response_kind":"response","response_kind_reason":"plans no skill or tool call"');
    expect(transcript).toContain('"finish_summary":"Done."');
    expect(transcript).toContain('"allocated_disclosure_tokens":');

    const twice = await run("operator", "skill-decode-twice", [
      answer("Plain words."),
      answer("The answer is 42."),
      answer("42."),
    ]);
    expect(twice.task.status).toBe("completed");
    expect(twice.task.result).toBe("42.");
    expect(ofType(twice.log, "llm_decision_decoded").map((e) => e.payload.success)).toEqual([false, false]);
    const synthesis = await (
      await api(`/v1/tasks/${twice.task.id}/artifacts/artifacts/final_answer_prompt_turn_3.txt`)
    ).text();
    expect(synthesis).toContain("The answer is 42.");
  });

  it("turns native tool calls into the plan, and retries a failing command before moving on", async () => {
    const { task, log } = await run("operator", "skill-native", [
      { content: [toolUse("Bash", { command: "echo native" })], stop_reason: "tool_use" },
      decision({ planned_actions: [{ type: "run_command", params: { command: "echo trying; exit 3" } }] }),
      finish("ok"),
      answer("ok"),
    ]);
    expect(task.status).toBe("completed");
    expect(ofType(log, "native_tool_fallback")).toHaveLength(1);
    const steps = ofType(log, "skill_step_executed").map((e) => [
      e.payload.command,
      e.payload.status,
      e.payload.retry_count,
    ]);
    expect(steps).toEqual([
      ["echo native", "success", 0],
      ["echo trying; exit 3", "failed", 0],
      ["echo trying; exit 3", "failed", 1],
    ]);
    expect(ofType(log, "step_retry_scheduled").map((e) => e.payload)).toEqual([
      { turn_index: 2, step_id: "step-1", retry_count: 1 },
    ]);
  });

  it("notices a skill handing off to itself, constrains it, then recovers by finishing", async () => {
    const again = decision({
      selected_skill: "incident-triage",
      planned_actions: [{ type: "call_skill", params: { skill_name: "incident-triage" } }],
    });
    const { task, log } = await run("operator", "skill-handoff", [again, again, again, answer("SEV2: page on-call.")]);
    expect(task.status).toBe("completed");
    expect(task.result).toBe("SEV2: page on-call.");
    expect(ofType(log, "self_handoff_detected").map((e) => e.payload.count)).toEqual([2, 3]);
    expect(ofType(log, "self_handoff_constraint_applied")[0]?.payload).toMatchObject({
      blocked_skill: "incident-triage",
    });
    expect(ofType(log, "self_handoff_recovery_applied")[0]?.payload).toMatchObject({
      recovery_action_types: ["finish"],
    });
    expect(JSON.stringify((await modelRequest(task.id, 3)).messages)).toContain("Do not call_skill incident-triage");
  });

  it("calls MCP tools through mcp_call (the real server-everything), with the call's result on the next turn", async () => {
    const agent = `skills_mcp_${crypto.randomUUID().slice(0, 6)}`;
    registry.register(
      agent,
      class extends SkillAgent {
        constructor() {
          super({
            name: agent,
            systemPrompt: "You help.",
            mcpServers: { everything: { url: inject("mcpUrl") } },
            allowedTools: ["mcp__everything__get-sum"],
          });
        }
      },
    );
    const { task, log } = await run(agent, "skill-mcp", [
      decision({
        planned_actions: [
          { type: "mcp_call", params: { tool_name: "mcp__everything__get-sum", arguments: { a: 2, b: 40 } } },
        ],
      }),
      finish("42"),
      answer("The sum is 42."),
    ]);
    expect(task.status).toBe("completed");
    expect(ofType(log, "mcp_tool_call_completed")[0]?.payload).toMatchObject({
      tool_name: "mcp__everything__get-sum",
      status: "success",
      step_result: expect.objectContaining({ exit_code: 0, status: "success" }),
    });
    expect(ofType(log, "skill_step_executed")[0]?.payload).toMatchObject({
      type: "mcp_call",
      tool_name: "mcp__everything__get-sum",
      status: "success",
    });
    expect(ofType(log, "llm_decision_decoded")[0]?.payload.response_kind).toBe("tool_call");
    expect(JSON.stringify((await modelRequest(task.id, 2)).messages)).toContain("42");
  });

  it("answers with the finish action's text when the synthesis call fails", async () => {
    const { task, log } = await run("operator", "skill-synth-fail", [
      finish("The draft answer."),
      { content: [{ type: "text", text: "unused" }], faults: [{ kind: "http", status: 400 }] },
    ]);
    expect(task.status).toBe("completed");
    expect(task.result).toBe("The draft answer.");
    expect(ofType(log, "final_answer_synthesis_failed")).toHaveLength(1);
  });

  it("asks the person through ask_user and continues with the answer", async () => {
    const marker = uniqueMarker("skill-ask");
    await script(marker, [
      decision({ planned_actions: [{ type: "ask_user", params: { message: "Which version?" } }] }),
      finish("2.4"),
      answer("Version 2.4."),
    ]);
    const started = await startTask("operator", `notes ${marker}`);
    const waiting = await waitForTask(started.id);
    expect(waiting.status).toBe("input_required");
    expect(waiting.pending_input).toMatchObject({ kind: "question", question: "Which version?" });
    const request_id = pendingRequestId(waiting);
    // The skill agent's ask_user action is a call of its own: its id names the request.
    expect(request_id).toMatch(/^toolu_skill_1_1_0$/);
    const res = await api(`/v1/tasks/${started.id}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id, action: "approve", message: "2.4, please" }),
    });
    expect(res.status).toBe(200);
    const done = await waitForTask(started.id);
    expect(done.result).toBe("Version 2.4.");
    expect(JSON.stringify((await modelRequest(started.id, 2)).messages)).toContain("2.4, please");
  });

  it("survives an eviction mid-run: no model turn or command twice", async () => {
    const marker = uniqueMarker("skill-evict");
    await script(
      marker,
      [
        decision({ planned_actions: [{ type: "run_command", params: { command: "echo one >> log.txt" } }] }),
        decision({ planned_actions: [{ type: "run_command", params: { command: "echo two >> log.txt" } }] }),
        finish("done"),
        answer("All done."),
      ],
      { ttft_ms: 300 },
    );
    const task = await startTask("operator", `log ${marker}`);
    // Let the first command land, then evict during the second model turn.
    for (let i = 0; i < 100; i++) {
      const log = await events(task.id);
      if (ofType(log, "llm_request_sent").length >= 2) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    await abortAllDurableObjects();
    await fireTimers(task.id, ["heartbeat"]);
    const done = await waitForTask(task.id, 30);
    expect(done.result).toBe("All done.");
    expect(await (await api(`/v1/tasks/${task.id}/workspace/log.txt`)).text()).toBe("one\ntwo\n");
    const log = await events(task.id);
    expect(ofType(log, "skill_step_executed")).toHaveLength(2);
    expect(ofType(log, "llm_decision_decoded")).toHaveLength(3);
  });

  it("composes the prompt in a dry run and calls no model, for a skill agent and a tool-loop agent alike", async () => {
    for (const agent of ["operator", "planner"]) {
      const marker = uniqueMarker(`dry-run-${agent}`);
      const started = await api(`/v1/agents/${agent}/tasks`, {
        method: "POST",
        body: JSON.stringify({ input: `Write the release notes ${marker}`, dry_run: true }),
      });
      expect(started.status).toBe(202);
      const task = await waitForTask((await parseBody(started, TaskResourceSchema)).id);
      expect(task.status, agent).toBe("completed");
      expect(task.dry_run).toBe(true);
      expect(task.result).toMatch(/^Dry run: the prompt was composed \(about \d+ tokens\)/);
      expect(task.usage).toMatchObject({ model_calls: 0, input_tokens: 0 });
      const log = await events(task.id);
      expect(ofType(log, "llm_request_sent")).toHaveLength(0);
      expect(ofType(log, "run_started")[0]?.payload.dry_run).toBe(true);
      const prompt = await (await api(`/v1/tasks/${task.id}/artifacts/dry_run_prompt.txt`)).text();
      expect(prompt).toContain(marker);
      if (agent === "operator") {
        expect(prompt).toContain("Answer every turn with one JSON object");
        expect(prompt).toContain("release-notes");
        expect(ofType(log, "skill_prefilter_completed")).toHaveLength(1);
      } else {
        expect(prompt).toContain('"name": "TodoWrite"');
      }
    }
  });

  it("is refused when it names a skill the catalog does not have", async () => {
    const name = `skills_missing_${crypto.randomUUID().slice(0, 6).replaceAll("-", "")}`;
    registry.register(
      name,
      class extends SkillAgent {
        constructor() {
          super({ name, systemPrompt: "x", skills: ["no-such-skill"] });
        }
      },
    );
    const { task } = await run(name, "skill-missing", [finish("x")]);
    expect(task.status).toBe("failed");
    expect(task.error?.message).toContain("no-such-skill");
  });
});
