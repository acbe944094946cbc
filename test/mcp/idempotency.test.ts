// Idempotency keys on MCP tool calls (src/mcp/idempotency.ts), seen from a real server: the ledger server of
// test/support/ledger-mcp-server.ts, whose `charge` tool honours the key. Every tools/call carries one key in the
// Idempotency-Key header and in params._meta, on both transports; it names the call (task, tool_use, full tool name),
// so a fallback is a call of its own, while a call sent again (after an eviction in the middle of it, or after the
// server lost the session) carries the same key, and the server charges once.
import { abortAllDurableObjects } from "cloudflare:test";
import { describe, expect, inject, it } from "vitest";
import { CheckpointListSchema, TaskResourceSchema } from "../../src/http/responses.ts";
import { idempotencyKeyOfBody, mcpIdempotencyKey } from "../../src/mcp/idempotency.ts";
import {
  api,
  apiJson,
  defineAgent,
  done,
  type EventBody,
  emulatorRequests,
  events,
  fireTimers,
  ofType,
  parseBody,
  pendingRequestId,
  type ScriptTurn,
  script,
  startTask,
  toolResults,
  toolUse,
  uniqueMarker,
  waitForEvent,
  waitForTask,
} from "../support/helpers.ts";
import type { LedgerRequest, LedgerStats } from "../support/ledger-mcp-server.ts";

const LEDGER = inject("ledgerUrl");
const KEY_SHAPE = /^outpost-v1-[0-9a-f]{64}$/;

async function ledgerStats(): Promise<LedgerStats> {
  const res = await fetch(`${LEDGER}/stats`);
  expect(res.status).toBe(200);
  return (await res.json()) as LedgerStats;
}

/** The tools/call POSTs the ledger saw for `account`, in order. */
async function chargeRequests(account: string): Promise<LedgerRequest[]> {
  return (await ledgerStats()).requests.filter((r) => r.rpc === "tools/call" && r.account === account);
}

/** Polls the ledger until a tools/call for `account` has reached it. */
async function untilCallArrives(account: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    if ((await chargeRequests(account)).length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`no call for ${account} reached the ledger`);
}

const charge = (account: string, extra: Record<string, unknown> = {}): ScriptTurn["content"][number] =>
  toolUse("mcp__ledger__charge", { account, amount: 500, ...extra });

/** The tool_use id of the call whose arguments name `account` (the events' step_id). */
function toolUseIdFor(log: EventBody[], account: string): string {
  const started = ofType(log, "mcp_tool_call_started").find(
    (e) => (e.payload.arguments as { account?: string }).account === account,
  );
  expect(started).toBeDefined();
  return String(started?.payload.step_id);
}

describe("idempotency keys", () => {
  it("derives the same key from the same task, tool_use and tool, and a different one when any of them differs", async () => {
    const parts = { taskId: "task-1", toolUseId: "toolu_1", toolName: "mcp__ledger__charge" };
    const key = await mcpIdempotencyKey(parts);
    expect(key).toMatch(KEY_SHAPE);
    expect(await mcpIdempotencyKey({ ...parts })).toBe(key);
    const others = await Promise.all([
      mcpIdempotencyKey({ ...parts, taskId: "task-2" }),
      mcpIdempotencyKey({ ...parts, toolUseId: "toolu_2" }),
      mcpIdempotencyKey({ ...parts, toolName: "mcp__backup__charge" }),
      // Parts are joined by NUL, so moving a boundary between them is another key.
      mcpIdempotencyKey({ taskId: "task-1toolu_1", toolUseId: "", toolName: "mcp__ledger__charge" }),
    ]);
    expect(new Set([key, ...others]).size).toBe(5);
  });

  it("reads the key from a tools/call body only", () => {
    const meta = { _meta: { "io.outpost/idempotency-key": "outpost-v1-abc" } };
    const call = { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "charge", arguments: {}, ...meta } };
    expect(idempotencyKeyOfBody(JSON.stringify(call))).toBe("outpost-v1-abc");
    expect(idempotencyKeyOfBody(JSON.stringify({ ...call, method: "tools/list" }))).toBeUndefined();
    expect(idempotencyKeyOfBody(JSON.stringify({ ...call, params: { name: "charge" } }))).toBeUndefined();
    expect(idempotencyKeyOfBody("not json io.outpost/idempotency-key")).toBeUndefined();
  });
});

describe("idempotency keys on MCP calls, seen by a server that honours them", () => {
  it("sends every tools/call its own key, equal in the Idempotency-Key header and in _meta, and no key on other requests", async () => {
    const agent = defineAgent({ mcpServers: { ledger: { url: `${LEDGER}/mcp` } } });
    const marker = uniqueMarker("idem-two");
    const [first, second] = [`acct-a-${marker}`, `acct-b-${marker}`];
    await script(marker, [{ content: [charge(first), charge(second)], stop_reason: "tool_use" }, done]);
    const task = await startTask(agent, `two charges ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");

    const log = await events(task.id);
    const expected = await Promise.all(
      [first, second].map((account) =>
        mcpIdempotencyKey({ taskId: task.id, toolUseId: toolUseIdFor(log, account), toolName: "mcp__ledger__charge" }),
      ),
    );
    const calls = [...(await chargeRequests(first)), ...(await chargeRequests(second))];
    expect(calls.map((c) => [c.path, c.header, c.meta, c.status])).toEqual([
      ["/mcp", expected[0], expected[0], 200],
      ["/mcp", expected[1], expected[1], 200],
    ]);
    expect(expected[0]).toMatch(KEY_SHAPE);
    expect(expected[0]).not.toBe(expected[1]);
    // The handshake, the tool list and the session's end carry none: a key names a call.
    const session = (await ledgerStats()).requests.filter((r) => r.session === calls[0]?.session);
    expect(session.filter((r) => r.rpc !== "tools/call").map((r) => [r.rpc, r.header, r.meta])).toEqual([
      ["notifications/initialized", null, null],
      ["tools/list", null, null],
    ]);
    const { executions, keys } = await ledgerStats();
    expect([executions[first], executions[second]]).toEqual([1, 1]);
    expect(keys.filter((k) => expected.includes(k.key)).map((k) => [k.requests, k.executions])).toEqual([
      [1, 1],
      [1, 1],
    ]);
  });

  it("carries the key in the header and in _meta over the legacy SSE transport too", async () => {
    const agent = defineAgent({ mcpServers: { ledger: { transport: "sse", url: `${LEDGER}/sse` } } });
    const marker = uniqueMarker("idem-sse");
    const account = `acct-${marker}`;
    await script(marker, [{ content: [charge(account)], stop_reason: "tool_use" }, done]);
    const task = await startTask(agent, `legacy ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");

    const log = await events(task.id);
    expect(ofType(log, "mcp_servers_connected")[0]?.payload.servers).toEqual({ ledger: { transport: "sse" } });
    const key = await mcpIdempotencyKey({
      taskId: task.id,
      toolUseId: toolUseIdFor(log, account),
      toolName: "mcp__ledger__charge",
    });
    const calls = await chargeRequests(account);
    expect(calls.map((c) => [c.path, c.header, c.meta])).toEqual([["/messages", key, key]]);
    expect((await ledgerStats()).executions[account]).toBe(1);
  });

  it("gives a fallback tool tried for the same tool_use a key of its own", async () => {
    const agent = defineAgent({
      mcpServers: {
        ledger: {
          url: `${LEDGER}/mcp`,
          tools: { charge: { timeout_seconds: 1, fallback_tools: ["mcp__backup__charge"] } },
        },
        backup: { url: `${LEDGER}/mcp` },
      },
    });
    const marker = uniqueMarker("idem-fallback");
    const account = `acct-${marker}`;
    // 2 s of work: the first tool's 1 s timeout hands the call to the fallback, which has the default timeout.
    await script(marker, [{ content: [charge(account, { delay_ms: 2_000 })], stop_reason: "tool_use" }, done]);
    const task = await startTask(agent, `fallback ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");

    const log = await events(task.id);
    expect(ofType(log, "mcp_tool_call_started").map((e) => e.payload.tool_name)).toEqual([
      "mcp__ledger__charge",
      "mcp__backup__charge",
    ]);
    const toolUseId = toolUseIdFor(log, account);
    const primary = await mcpIdempotencyKey({ taskId: task.id, toolUseId, toolName: "mcp__ledger__charge" });
    const fallback = await mcpIdempotencyKey({ taskId: task.id, toolUseId, toolName: "mcp__backup__charge" });
    expect(primary).not.toBe(fallback);
    const calls = await chargeRequests(account);
    expect(calls.map((c) => [c.header, c.meta])).toEqual([
      [primary, primary],
      [fallback, fallback],
    ]);
  });

  it("sends a call in flight at an eviction again with the same key: the server charges once and the model gets the result once", async () => {
    const agent = defineAgent({ mcpServers: { ledger: { url: `${LEDGER}/mcp` } } });
    const marker = uniqueMarker("idem-evict");
    const account = `acct-${marker}`;
    // A 3 s charge: the object is evicted once the call has reached the server, well before the charge ends.
    await script(marker, [{ content: [charge(account, { delay_ms: 3_000 })], stop_reason: "tool_use" }, done]);
    const task = await startTask(agent, `evict mid-call ${marker}`);
    await untilCallArrives(account);
    await abortAllDurableObjects();
    expect(await fireTimers(task.id, ["heartbeat"])).toBe(true);
    expect((await waitForTask(task.id)).status).toBe("completed");

    // Two requests (the second from the resumed run, on a new session), one charge.
    const stats = await ledgerStats();
    const calls = await chargeRequests(account);
    expect(calls).toHaveLength(2);
    expect(calls[0]?.session).not.toBe(calls[1]?.session);
    expect(stats.executions[account]).toBe(1);
    // Both requests carried the call's one key, in both places.
    const log = await events(task.id);
    const toolUseId = toolUseIdFor(log, account);
    const key = await mcpIdempotencyKey({ taskId: task.id, toolUseId, toolName: "mcp__ledger__charge" });
    expect(calls.map((c) => [c.header, c.meta])).toEqual([
      [key, key],
      [key, key],
    ]);
    expect(stats.keys.filter((k) => k.key === key)).toEqual([{ key, account, requests: 2, executions: 1 }]);

    expect(ofType(log, "run_resumed")).toHaveLength(1);
    expect(ofType(log, "mcp_tool_call_started").map((e) => e.payload.attempt)).toEqual([1, 2]);
    expect(ofType(log, "mcp_tool_call_completed")).toHaveLength(1);
    // The model was asked twice in all, and its second request holds the one result.
    expect(await emulatorRequests(task.id)).toHaveLength(2);
    expect(await toolResults(task.id, 2)).toEqual([
      {
        type: "tool_result",
        tool_use_id: toolUseId,
        content: `Charged 500 to ${account} (charge 1 on this account).`,
        is_error: false,
      },
    ]);
  });

  it("sends the call again with the same key when the server lost the session", async () => {
    const agent = defineAgent({ mcpServers: { ledger: { url: `${LEDGER}/mcp` } } });
    const marker = uniqueMarker("idem-session");
    const account = `acct-${marker}`;
    await script(marker, [
      { content: [charge(account, { amount: 100 })], stop_reason: "tool_use" },
      // 2 s before the second call: the server forgets its sessions in that window.
      Object.assign({ ttft_ms: 2_000 }, { content: [charge(account, { amount: 200 })], stop_reason: "tool_use" }),
      done,
    ]);
    const task = await startTask(agent, `session lost ${marker}`);
    await waitForEvent(task.id, (e) => e.event_type === "llm_request_sent" && e.payload.turn_index === 2);
    expect((await fetch(`${LEDGER}/forget-sessions`, { method: "POST" })).status).toBe(200);
    expect((await waitForTask(task.id)).status).toBe("completed");

    const calls = await chargeRequests(account);
    const [first, refused, again] = calls;
    expect(calls.map((c) => c.status)).toEqual([200, 404, 200]);
    expect(refused?.header).toEqual(expect.stringMatching(KEY_SHAPE));
    expect([refused?.meta, again?.header, again?.meta]).toEqual([refused?.header, refused?.header, refused?.header]);
    expect(first?.header).not.toBe(refused?.header);
    expect(again?.session).not.toBe(refused?.session);
    expect((await ledgerStats()).executions[account]).toBe(2);
  });

  it("re-sends a call a fork inherited half-done with its first key once approved, and with its own once changed", async () => {
    const agent = defineAgent({ mcpServers: { ledger: { url: `${LEDGER}/mcp` } } });
    const marker = uniqueMarker("idem-fork");
    const account = `acct-fork-${marker}`;
    const changed = `acct-changed-${marker}`;
    await script(marker, [{ content: [charge(account, { delay_ms: 1500 })], stop_reason: "tool_use" }, done]);
    const origin = await startTask(agent, `charge then cancel ${marker}`);
    await untilCallArrives(account);
    expect((await api(`/v1/tasks/${origin.id}/cancel`, { method: "POST" })).status).toBe(200);
    const list = await apiJson(`/v1/tasks/${origin.id}/checkpoints`, CheckpointListSchema);
    const at = list.checkpoints.find((c) => c.position === "turn_1_model")?.checkpoint_id;
    const [first] = await chargeRequests(account);
    const fork = async (decision: Record<string, unknown>): Promise<string> => {
      const res = await api(`/v1/tasks/${origin.id}/fork`, {
        method: "POST",
        body: JSON.stringify({ checkpoint_id: at }),
      });
      expect(res.status).toBe(202);
      const waiting = await waitForTask((await parseBody(res, TaskResourceSchema)).id);
      const request_id = pendingRequestId(waiting);
      const body = JSON.stringify({ request_id, ...decision });
      expect((await api(`/v1/tasks/${waiting.id}/resume`, { method: "POST", body })).status).toBe(200);
      expect((await waitForTask(waiting.id)).status).toBe("completed");
      return waiting.id;
    };

    // Approved as it was: the same call again, so the origin's key, and the server answers from its record.
    await fork({ action: "approve" });
    const again = await chargeRequests(account);
    expect(again.map((r) => r.header)).toEqual([first?.header, first?.header]);
    expect((await ledgerStats()).executions[account]).toBe(1);

    // Changed by the reviewer: another call, under the fork's own key, which the server runs.
    const forked = await fork({ action: "modify", tool_input: { account: changed, amount: 700 } });
    const [rewritten] = await chargeRequests(changed);
    const toolUseId = toolUseIdFor(await events(forked), changed);
    expect(rewritten?.header).toBe(
      await mcpIdempotencyKey({ taskId: forked, toolUseId, toolName: "mcp__ledger__charge" }),
    );
    expect(rewritten?.header).not.toBe(first?.header);
    expect((await ledgerStats()).executions[changed]).toBe(1);
  });
});
