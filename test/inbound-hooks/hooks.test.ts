// Inbound webhooks: POST /v1/hooks/:hook_id, signed with Standard Webhooks or GitHub's X-Hub-Signature-256 (signed
// here with the reference libraries), starts a run of the agent that declares the hook, once per delivery id.

import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { sign as githubSign } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import type { TaskObject } from "../../durable-objects/task-object.ts";
import { Agent } from "../../src/agents/agent.ts";
import type { RequestErrorCode } from "../../src/errors/codes.ts";
import { ConfigError } from "../../src/errors.ts";
import { HookIgnoredSchema, HookPongSchema, HookReceiptSchema } from "../../src/http/responses.ts";
import { derivedTaskId, taskStubFor } from "../../src/tasks/task-ids.ts";
import {
  api,
  defineAgent,
  emulatorRequests,
  errorOf,
  expectError,
  fireTimers,
  parseBody,
  pendingRequestId,
  script,
  settledAlarm,
  stubFor,
  toolUse,
  waitForTask,
} from "../support/helpers.ts";

// Worker secrets the test deployment sets (vitest.config.ts); hooks name them.
const secrets = env as unknown as Record<string, string>;
const STANDARD_SECRET = secrets.TEST_STANDARD_HOOK_SECRET as string;
const GITHUB_SECRET = secrets.TEST_GITHUB_HOOK_SECRET as string;

let hookCounter = 0;

/** An agent with one hook; returns the hook id. */
function hookAgent(hook: Record<string, unknown>): string {
  const id = `hook-${++hookCounter}-${crypto.randomUUID().slice(0, 8)}`;
  defineAgent({ hooks: { [id]: hook } as never });
  return id;
}

function standardHeaders(body: string, id: string, at = new Date(), secret = STANDARD_SECRET): Record<string, string> {
  return {
    "content-type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(Math.floor(at.getTime() / 1000)),
    "webhook-signature": new Webhook(secret).sign(id, at, body),
  };
}

function deliver(hookId: string, body: string, headers: Record<string, string>): Promise<Response> {
  // No API key: the signature is the credential.
  return api(`/v1/hooks/${hookId}`, { method: "POST", body, headers, key: null });
}

describe("Standard Webhooks hooks", () => {
  it("starts a run with the rendered input, once per delivery id", async () => {
    const marker = `[hook-std-${crypto.randomUUID()}]`;
    await script(marker, [{ content: [{ type: "text", text: "Triaged." }] }]);
    const hookId = hookAgent({
      scheme: "standard",
      secret: "TEST_STANDARD_HOOK_SECRET",
      input: "Triage {{payload.ticket.title}} from {{payload.ticket.customer}} <b>{{delivery_id}}</b>",
      metadata: { source: "helpdesk" },
    });
    const body = JSON.stringify({ ticket: { title: `Refund ${marker}`, customer: "Ana & Co" } });
    const deliveryId = `msg_${crypto.randomUUID()}`;
    const first = await deliver(hookId, body, standardHeaders(body, deliveryId));
    expect(first.status).toBe(202);
    const receipt = await parseBody(first, HookReceiptSchema);
    expect(receipt).toMatchObject({ hook_id: hookId, delivery_id: deliveryId, duplicate: false });
    const task = await waitForTask(receipt.task_id);
    expect(task.status).toBe("completed");
    // Values go in as they are: no HTML escaping in a prompt.
    expect(task.input).toBe(`Triage Refund ${marker} from Ana & Co <b>${deliveryId}</b>`);
    expect(task.metadata).toEqual({ source: "helpdesk" });
    expect(task.trigger).toEqual({
      hook_id: hookId,
      delivery_id: deliveryId,
      event: null,
    });

    // The sender retries the same delivery (a new signature, a later timestamp): the same task, no second run.
    const again = await deliver(hookId, body, standardHeaders(body, deliveryId, new Date(Date.now() + 1000)));
    expect(again.status).toBe(200);
    expect(await parseBody(again, HookReceiptSchema)).toMatchObject({ task_id: receipt.task_id, duplicate: true });
  });

  it("refuses a bad, missing or stale signature with 401 and starts nothing", async () => {
    const hookId = hookAgent({ scheme: "standard", secret: "TEST_STANDARD_HOOK_SECRET", input: "{{payload.x}}" });
    const body = '{"x": "hello"}';
    const cases: [Record<string, string>, RequestErrorCode][] = [
      [{ "content-type": "application/json" }, "signature_missing"],
      [standardHeaders(body, "msg_1", new Date(), `whsec_${btoa("another secret")}`), "signature_invalid"],
      [standardHeaders(body, "msg_2", new Date(Date.now() - 6 * 60_000)), "timestamp_out_of_tolerance"],
      [standardHeaders(body, "msg_3", new Date(Date.now() + 6 * 60_000)), "timestamp_out_of_tolerance"],
      [{ ...standardHeaders('{"x": "other"}', "msg_4") }, "signature_invalid"],
    ];
    for (const [headers, code] of cases) {
      await expectError(await deliver(hookId, body, headers), 401, code, "signature");
      // Nothing was started under that delivery id.
      const id = await derivedTaskId("hook", "default", hookId, headers["webhook-id"] ?? "");
      await expectError(await api(`/v1/tasks/${id}`), 404, "task_not_found", "id");
    }
    await expectError(
      await deliver("no-such-hook", body, standardHeaders(body, "m")),
      404,
      "hook_not_found",
      "hook_id",
    );
  });

  it("answers 422 when the template renders nothing, and 400 for a payload that is not JSON", async () => {
    const hookId = hookAgent({ scheme: "standard", secret: "TEST_STANDARD_HOOK_SECRET", input: "{{payload.missing}}" });
    const body = '{"x": 1}';
    await expectError(await deliver(hookId, body, standardHeaders(body, "msg_empty")), 422, "hook_input_empty");
    const notJson = "x=1";
    await expectError(
      await deliver(hookId, notJson, standardHeaders(notJson, "msg_form")),
      400,
      "invalid_json",
      "(body)",
    );
  });
});

describe("GitHub hooks", () => {
  async function githubHeaders(body: string, event: string, delivery = crypto.randomUUID()) {
    return {
      "content-type": "application/json",
      "x-github-event": event,
      "x-github-delivery": delivery,
      "x-hub-signature-256": await githubSign(GITHUB_SECRET, body),
    };
  }

  it("runs on the events it names, answers pings, ignores the rest, and refuses a bad signature", async () => {
    const marker = `[hook-gh-${crypto.randomUUID()}]`;
    await script(marker, [{ content: [{ type: "text", text: "Reviewed." }] }]);
    const hookId = hookAgent({
      scheme: "github",
      secret: "TEST_GITHUB_HOOK_SECRET",
      events: ["push"],
      input:
        "Review the push to {{payload.repository.full_name}} ({{event}}):{{#payload.commits}}\n- {{message}}{{/payload.commits}}",
    });
    const push = JSON.stringify({
      repository: { full_name: `acme/site ${marker}` },
      commits: [{ message: "Fix header" }, { message: "Add footer" }],
    });
    const res = await deliver(hookId, push, await githubHeaders(push, "push"));
    expect(res.status).toBe(202);
    const task = await waitForTask((await parseBody(res, HookReceiptSchema)).task_id);
    expect(task.input).toBe(`Review the push to acme/site ${marker} (push):\n- Fix header\n- Add footer`);
    expect(task.status).toBe("completed");

    const ping = '{"zen": "Keep it logically awesome."}';
    const pong = await deliver(hookId, ping, await githubHeaders(ping, "ping"));
    expect(pong.status).toBe(200);
    expect(await parseBody(pong, HookPongSchema)).toEqual({ hook_id: hookId, status: "pong" });

    const issue = '{"action": "opened"}';
    const ignored = await deliver(hookId, issue, await githubHeaders(issue, "issues"));
    expect(ignored.status).toBe(200);
    expect(await parseBody(ignored, HookIgnoredSchema)).toMatchObject({ status: "ignored" });

    const forged = { ...(await githubHeaders(push, "push")), "x-hub-signature-256": `sha256=${"0".repeat(64)}` };
    await expectError(await deliver(hookId, push, forged), 401, "signature_invalid", "signature");
    const unsigned = await githubHeaders(push, "push");
    delete (unsigned as Record<string, string>)["x-hub-signature-256"];
    await expectError(await deliver(hookId, push, unsigned), 401, "signature_missing", "signature");
  });

  it("takes GitHub's form encoding (payload=<json>)", async () => {
    const marker = `[hook-form-${crypto.randomUUID()}]`;
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const hookId = hookAgent({ scheme: "github", secret: "TEST_GITHUB_HOOK_SECRET", input: "{{payload.note}}" });
    const body = new URLSearchParams({ payload: JSON.stringify({ note: `form ${marker}` }) }).toString();
    const headers = { ...(await githubHeaders(body, "push")), "content-type": "application/x-www-form-urlencoded" };
    const res = await deliver(hookId, body, headers);
    expect(res.status).toBe(202);
    expect((await waitForTask((await parseBody(res, HookReceiptSchema)).task_id)).input).toBe(`form ${marker}`);
  });
});

describe("GitHub replays, events and rate limits", () => {
  async function githubHeaders(body: string, event: string | null, delivery = crypto.randomUUID()) {
    return {
      "content-type": "application/json",
      ...(event === null ? {} : { "x-github-event": event }),
      "x-github-delivery": delivery,
      "x-hub-signature-256": await githubSign(GITHUB_SECRET, body),
    };
  }

  it("answers a replay of a signed body under a new delivery id with the original task, and starts nothing", async () => {
    const marker = `[hook-replay-${crypto.randomUUID()}]`;
    await script(marker, [{ content: [{ type: "text", text: "Once." }] }]);
    const hookId = hookAgent({
      scheme: "github",
      secret: "TEST_GITHUB_HOOK_SECRET",
      events: ["push", "issues"],
      input: "{{payload.note}}",
    });
    const body = JSON.stringify({ note: `push ${marker}` });
    const delivery = crypto.randomUUID();
    const first = await deliver(hookId, body, await githubHeaders(body, "push", delivery));
    expect(first.status).toBe(202);
    const original = await parseBody(first, HookReceiptSchema);
    expect((await waitForTask(original.task_id)).status).toBe("completed");

    // GitHub's redeliver (same id, same body), a replay under a new id, and one that also names another event.
    for (const [id, event] of [
      [delivery, "push"],
      [crypto.randomUUID(), "push"],
      [crypto.randomUUID(), "issues"],
    ] as const) {
      const again = await deliver(hookId, body, await githubHeaders(body, event, id));
      expect(again.status).toBe(200);
      expect(await parseBody(again, HookReceiptSchema)).toEqual({
        hook_id: hookId,
        delivery_id: id,
        task_id: original.task_id,
        status: "completed",
        duplicate: true,
      });
    }
    // The task is still the first delivery's, and its run happened once.
    const task = await waitForTask(original.task_id);
    expect(task.trigger).toEqual({
      hook_id: hookId,
      delivery_id: delivery,
      event: "push",
    });
    expect(await emulatorRequests(original.task_id)).toHaveLength(1);

    // A different delivery is a different body: its own task.
    const other = JSON.stringify({ note: `second push ${marker}` });
    const second = await deliver(hookId, other, await githubHeaders(other, "push"));
    expect(second.status).toBe(202);
    expect((await parseBody(second, HookReceiptSchema)).task_id).not.toBe(original.task_id);
  });

  it("answers GitHub's redelivery of a task named by its delivery id (before bodies named tasks) with that task", async () => {
    const hookId = hookAgent({ scheme: "github", secret: "TEST_GITHUB_HOOK_SECRET", input: "{{payload.note}}" });
    const body = JSON.stringify({ note: `older ${crypto.randomUUID()}` });
    const delivery = crypto.randomUUID();
    // The task as the previous version created it: its object named by the delivery id.
    const id = await derivedTaskId("hook", "default", hookId, delivery);
    const started = await taskStubFor(env, "default", id).start({
      id,
      tenant: "default",
      trigger: { hook_id: hookId, delivery_id: delivery, event: "push" },
      agent: "assistant",
      input: "older delivery",
      metadata: {},
      model: "claude-sonnet-5-5",
      retentionDays: 7,
      retentionExplicit: false,
      tags: [],
      parentTaskId: null,
    });
    expect(started.outcome).toBe("created");
    const again = await deliver(hookId, body, await githubHeaders(body, "push", delivery));
    expect(again.status).toBe(200);
    expect(await parseBody(again, HookReceiptSchema)).toMatchObject({
      delivery_id: delivery,
      task_id: id,
      duplicate: true,
    });
  });

  it("answers a replay of an expired delivery's body with 410 task_expired, and spends no token on it", async () => {
    const marker = `[hook-expired-${crypto.randomUUID()}]`;
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const hookId = hookAgent({
      scheme: "github",
      secret: "TEST_GITHUB_HOOK_SECRET",
      input: "{{payload.note}}",
      rate_limit_per_minute: 1,
    });
    const body = JSON.stringify({ note: `expiring ${marker}` });
    const first = await deliver(hookId, body, await githubHeaders(body, "push"));
    expect(first.status).toBe(202);
    const { task_id } = await parseBody(first, HookReceiptSchema);
    const done = await waitForTask(task_id);
    expect(done.status).toBe("completed");
    // Retention runs out: the task's object keeps only its tombstone. Once the bundle is uploaded, the object's alarm
    // waits for the expiry; the completion is moved into the past and the alarm fired, as in test/config/retention.test.ts.
    const expiresAt = Date.parse(String(done.expires_at));
    expect(await settledAlarm(task_id, expiresAt)).toBe(expiresAt);
    await runInDurableObject(stubFor(task_id), async (instance: TaskObject, state) => {
      state.storage.sql.exec("UPDATE task SET completed_at = ?", new Date(Date.now() - 8 * 86_400_000).toISOString());
      (instance as unknown as { host: { store: { invalidate(): void } } }).host.store.invalidate();
    });
    expect(await fireTimers(task_id, ["expiry"])).toBe(true);
    await expectError(await api(`/v1/tasks/${task_id}`), 410, "task_expired", "id");

    // The hook's one token is spent; the replay is refused for being expired, not for the limit.
    const replay = await deliver(hookId, body, await githubHeaders(body, "push"));
    await expectError(replay, 410, "task_expired");
  });

  it("ignores a delivery without X-GitHub-Event when the hook runs only on the events it lists", async () => {
    const filtered = hookAgent({
      scheme: "github",
      secret: "TEST_GITHUB_HOOK_SECRET",
      events: ["push"],
      input: "{{payload.note}}",
    });
    const body = JSON.stringify({ note: `no event ${crypto.randomUUID()}` });
    const res = await deliver(filtered, body, await githubHeaders(body, null));
    expect(res.status).toBe(200);
    expect(await parseBody(res, HookIgnoredSchema)).toEqual({
      hook_id: filtered,
      status: "ignored",
      reason: "the delivery names no event (X-GitHub-Event), and the hook runs only on the events it lists",
    });
    // Nothing started: the same body with its event starts the first run of it.
    const started = await deliver(filtered, body, await githubHeaders(body, "push"));
    expect(started.status).toBe(202);
    expect((await parseBody(started, HookReceiptSchema)).duplicate).toBe(false);
  });

  it("answers 429 rate_limited with Retry-After past a hook's own per-minute limit, after the signature and the replay checks", async () => {
    const marker = `[hook-rate-${crypto.randomUUID()}]`;
    await script(marker, [{ content: [{ type: "text", text: "ok" }] }]);
    const hookId = hookAgent({
      scheme: "github",
      secret: "TEST_GITHUB_HOOK_SECRET",
      input: "{{payload.note}}",
      rate_limit_per_minute: 2,
    });
    const bodies = [1, 2, 3].map((n) => JSON.stringify({ note: `delivery ${n} ${marker}` }));
    const [one, two, three] = bodies as [string, string, string];
    // An unsigned or forged flood is refused before the bucket: it takes none of the hook's tokens.
    for (let i = 0; i < 3; i++) {
      const forged = { ...(await githubHeaders(one, "push")), "x-hub-signature-256": `sha256=${"0".repeat(64)}` };
      await expectError(await deliver(hookId, one, forged), 401, "signature_invalid", "signature");
    }
    const first = await deliver(hookId, one, await githubHeaders(one, "push"));
    expect(first.status).toBe(202);
    expect((await deliver(hookId, two, await githubHeaders(two, "push"))).status).toBe(202);
    // A replay starts nothing, so it costs nothing: it is still answered with its task.
    const replay = await deliver(hookId, one, await githubHeaders(one, "push"));
    expect(replay.status).toBe(200);
    expect((await parseBody(replay, HookReceiptSchema)).task_id).toBe(
      (await parseBody(first, HookReceiptSchema)).task_id,
    );

    const limited = await deliver(hookId, three, await githubHeaders(three, "push"));
    expect(limited.headers.get("ratelimit-limit")).toBe("2");
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(30);
    const error = await expectError(limited, 429, "rate_limited");
    expect(error.error.message).toMatch(
      new RegExp(`^The hook "${hookId}" may start 2 runs a minute; try again in \\d+ s\\.$`),
    );
  });
});

describe("the example triage agent", () => {
  it("triages a GitHub issue from its webhook, waits for approval of the list, and finishes", async () => {
    const marker = `[hook-triage-${crypto.randomUUID()}]`;
    const todos = [{ content: "Reproduce the crash", status: "pending" }];
    await script(marker, [
      { content: [toolUse("TodoWrite", { todos })], stop_reason: "tool_use" },
      { content: [{ type: "text", text: "A null config. Reproduce it first." }] },
    ]);
    const body = JSON.stringify({
      action: "opened",
      issue: { number: 42, title: `Crash on start ${marker}`, body: "It crashes." },
      repository: { full_name: "acme/site" },
    });
    const headers = {
      "content-type": "application/json",
      "x-github-event": "issues",
      "x-github-delivery": crypto.randomUUID(),
      "x-hub-signature-256": await githubSign(secrets.GITHUB_WEBHOOK_SECRET as string, body),
    };
    const res = await deliver("github-issues", body, headers);
    expect(res.status).toBe(202);
    const { task_id } = await parseBody(res, HookReceiptSchema);
    const waiting = await waitForTask(task_id);
    expect(waiting).toMatchObject({
      assigned_agent: "triage",
      status: "input_required",
      metadata: { source: "github" },
    });
    expect(waiting.input).toBe(
      `GitHub issue #42 in acme/site was opened.\nTitle: Crash on start ${marker}\n\nIt crashes.`,
    );
    expect(waiting.pending_input).toMatchObject({ kind: "approval", tool_name: "TodoWrite", input: { todos } });
    const request_id = pendingRequestId(waiting);
    const decision = JSON.stringify({ request_id, action: "approve" });
    expect((await api(`/v1/tasks/${task_id}/resume`, { method: "POST", body: decision })).status).toBe(200);
    const finished = await waitForTask(task_id);
    expect(finished).toMatchObject({ status: "completed", result: "A null config. Reproduce it first." });
  });
});

describe("hook definitions", () => {
  it("refuses bad hook settings when the agent is defined", () => {
    const bad: [Record<string, unknown>, RegExp][] = [
      [{ scheme: "svix", secret: "S", input: "x" }, /hooks\.h1\.scheme/],
      [{ scheme: "github", secret: "lowercase", input: "x" }, /NAME of a Worker secret/],
      [{ scheme: "github", secret: "OUTPOST_API_KEYS", input: "x" }, /Outpost's own secrets/],
      [{ scheme: "github", secret: "S", input: "{{#open}}" }, /not a valid template/],
      [{ scheme: "github", secret: "S", input: "x", tenant: "Not OK" }, /hooks\.h1\.tenant/],
      [{ scheme: "github", secret: "S", input: "x", extra: 1 }, /hooks\.h1/],
      [{ scheme: "github", secret: "S", input: "x", rate_limit_per_minute: 0 }, /hooks\.h1\.rate_limit_per_minute/],
      [{ scheme: "github", secret: "S", input: "x", rate_limit_per_minute: 1.5 }, /hooks\.h1\.rate_limit_per_minute/],
      [{ scheme: "github", secret: "S", input: "x", rate_limit_per_minute: "10" }, /hooks\.h1\.rate_limit_per_minute/],
    ];
    for (const [hook, message] of bad) {
      let error: unknown;
      try {
        new (class extends Agent {})({ name: "hooked", systemPrompt: "x", hooks: { h1: hook } as never });
      } catch (caught) {
        error = caught;
      }
      expect(error, JSON.stringify(hook)).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toMatch(message);
    }
  });

  it("refuses a hook whose tenant the agent does not allow", () => {
    const define = (hook: Record<string, unknown>) => () =>
      new (class extends Agent {})({
        name: "scoped",
        systemPrompt: "x",
        tenants: ["acme"],
        hooks: { h1: { scheme: "github", secret: "S", input: "x", ...hook } as never },
      });
    for (const hook of [{ tenant: "beta" }, {}]) {
      const error = errorOf(define(hook));
      expect(error, JSON.stringify(hook)).toBeInstanceOf(ConfigError);
      expect(error.message).toBe(
        `Agent "scoped": hooks.h1.tenant "${(hook as { tenant?: string }).tenant ?? "default"}" is not one of the agent's tenants (acme); a hook without a tenant starts tasks of "default".`,
      );
    }
    expect(define({ tenant: "acme" })().hooks[0]?.tenant).toBe("acme");
  });
});
