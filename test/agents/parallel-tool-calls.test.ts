// The read-only calls of one turn run at the same time (src/agents/tool-loop.ts, Toolbox.readOnly): Read, Glob,
// Grep, WebFetch and MCP tools their server marks readOnlyHint. A call that may change something (Write, Bash, an
// MCP tool without the hint) never runs beside another, one that may wait for a person never does either, and the
// model gets every result in its turn's order. The servers answer through a gate (test/support/rendezvous.ts) that
// says whether the calls it expected were in flight together, so nothing here is timed.
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { callGroups } from "../../src/agents/tool-loop.ts";
import {
  api,
  defineAgent,
  done,
  type EventBody,
  events,
  fireTimers,
  ofType,
  parseEvent,
  pendingRequestId,
  readSse,
  script,
  startTask,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

const WEB_URL = inject("webUrl");
const LEDGER = inject("ledgerUrl");

const fetchGate = (gate: string, n = 2) => toolUse("WebFetch", { url: `${WEB_URL}/gate?id=${gate}&n=${n}` });
const balance = (gate: string, n = 2) => toolUse("mcp__ledger__balance", { account: `acct-${gate}`, gate, gate_n: n });

describe("callGroups", () => {
  it("groups each run of consecutive reads and leaves every other call alone", () => {
    const calls = ["r", "r", "w", "r", "w", "w", "r", "r", "r"];
    expect(callGroups(calls, (c) => c === "r")).toEqual([[0, 1], [2], [3], [4], [5], [6, 7, 8]]);
    expect(callGroups([], () => true)).toEqual([]);
  });
});

describe("a turn's read-only calls", () => {
  it("run together, WebFetch beside an MCP tool marked readOnlyHint, and their results keep the turn's order", async () => {
    const agent = defineAgent({ webFetch: { enabled: true }, mcpServers: { ledger: { url: `${LEDGER}/mcp` } } });
    const gate = uniqueMarker("reads").replaceAll(/[^a-z0-9-]/gi, "");
    await script(gate, [
      { content: [fetchGate(gate, 3), balance(gate, 3), fetchGate(gate, 3)], stop_reason: "tool_use" },
      done,
    ]);
    const task = await startTask(agent, `Read ${gate}`);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const results = await toolResults(task.id, 2);
    expect(results.map((r) => String(r.content))).toEqual([
      expect.stringContaining(`gate ${gate}: together`),
      `acct-${gate}: 0 charges (together)`,
      expect.stringContaining(`gate ${gate}: together`),
    ]);
    expect(results.every((r) => !r.is_error)).toBe(true);
  });

  it("never run beside a call that may change something: reads before and after a write wait for it", async () => {
    const agent = defineAgent({ webFetch: { enabled: true }, mcpServers: { ledger: { url: `${LEDGER}/mcp` } } });
    const gate = uniqueMarker("write").replaceAll(/[^a-z0-9-]/gi, "");
    const charge = toolUse("mcp__ledger__charge", { account: `acct-${gate}`, amount: 5, gate });
    await script(gate, [{ content: [fetchGate(gate), charge, balance(gate)], stop_reason: "tool_use" }, done]);
    const task = await startTask(agent, `Write ${gate}`);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const results = (await toolResults(task.id, 2)).map((r) => String(r.content));
    expect(results[0]).toContain(`gate ${gate}: alone`);
    expect(results[1]).toMatch(/^Charged 5 to acct-/);
    // The read after the write saw it.
    expect(results[2]).toBe(`acct-${gate}: 1 charges (alone)`);
  });

  it("never include a call that waits for a person's approval", async () => {
    const agent = defineAgent({
      webFetch: { enabled: true },
      mcpServers: { ledger: { url: `${LEDGER}/mcp` } },
      toolPermissions: { WebFetch: "ask" },
    });
    const gate = uniqueMarker("approval").replaceAll(/[^a-z0-9-]/gi, "");
    await script(gate, [{ content: [balance(gate), fetchGate(gate)], stop_reason: "tool_use" }, done]);
    const task = await startTask(agent, `Ask ${gate}`);
    const waiting = await waitForTask(task.id);
    expect(waiting.status).toBe("input_required");
    const res = await api(`/v1/tasks/${task.id}/resume`, {
      method: "POST",
      body: JSON.stringify({ request_id: pendingRequestId(waiting), action: "approve" }),
    });
    expect(res.status).toBe(200);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");
    const results = (await toolResults(task.id, 2)).map((r) => String(r.content));
    expect(results).toEqual([`acct-${gate}: 0 charges (alone)`, expect.stringContaining(`gate ${gate}: alone`)]);
  });

  it("run again after an eviction only where they had not ended", async () => {
    const agent = defineAgent({ webFetch: { enabled: true }, mcpServers: { ledger: { url: `${LEDGER}/mcp` } } });
    const gate = uniqueMarker("evict").replaceAll(/[^a-z0-9-]/gi, "");
    // The quick read ends at once; the gated one waits for partners that never come (the interrupted attempt's
    // request may still be open at the server when the next one arrives: two of three), so it is in flight when the
    // object goes.
    const quick = toolUse("WebFetch", { url: `${WEB_URL}/plain.txt` });
    const slow = fetchGate(gate, 3);
    await script(gate, [{ content: [quick, slow], stop_reason: "tool_use" }, done]);
    const task = await startTask(agent, `Evict ${gate}`);
    const seen: EventBody[] = [];
    await readSse(await api(`/v1/tasks/${task.id}/events`), (frame) => {
      seen.push(parseEvent(frame.data));
      return ofType(seen, "tool_call_started").length === 2 && ofType(seen, "tool_call_completed").length === 1;
    });
    const idOf = (path: string) =>
      String(
        ofType(seen, "tool_call_started").find((e) => String((e.payload.input as { url: string }).url).includes(path))
          ?.payload.tool_use_id,
      );
    const [quickId, slowId] = [idOf("/plain.txt"), idOf("/gate")];
    expect(ofType(seen, "tool_call_completed")[0]?.payload.tool_use_id).toBe(quickId);
    await abortAllDurableObjects();
    expect(await fireTimers(task.id, ["heartbeat"])).toBe(true);
    expect((await waitForTask(task.id, 30)).status).toBe("completed");

    const log = await events(task.id);
    const startedFor = (id: string) => ofType(log, "tool_call_started").filter((e) => e.payload.tool_use_id === id);
    expect(startedFor(quickId)).toHaveLength(1);
    expect(startedFor(slowId).map((e) => e.payload.attempt)).toEqual([1, 2]);
    const results = (await toolResults(task.id, 2)).map((r) => String(r.content));
    expect(results).toEqual([
      expect.stringMatching(/plain text body\n$/),
      expect.stringContaining(`gate ${gate}: alone`),
    ]);
  });
});
