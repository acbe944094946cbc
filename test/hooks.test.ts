// Inbound webhooks: POST /v1/hooks/:hook_id, signed with Standard Webhooks or GitHub's X-Hub-Signature-256 (signed
// here with the reference libraries), starts a run of the agent that declares the hook, once per delivery id.

import { env } from "cloudflare:workers";
import { sign as githubSign } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { Agent } from "../src/agents/agent.ts";
import { ConfigError } from "../src/errors.ts";
import { derivedTaskId } from "../src/tasks/task-ids.ts";
import { api, defineAgent, expectError, script, type TaskBody, toolUse, waitForTask } from "./helpers.ts";

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

interface Receipt {
  hook_id: string;
  delivery_id: string;
  task_id: string;
  status: string;
  duplicate: boolean;
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
    const receipt = (await first.json()) as Receipt;
    expect(receipt).toMatchObject({ hook_id: hookId, delivery_id: deliveryId, duplicate: false });
    const task = await waitForTask(receipt.task_id);
    expect(task.status).toBe("completed");
    // Values go in as they are: no HTML escaping in a prompt.
    expect(task.input).toBe(`Triage Refund ${marker} from Ana & Co <b>${deliveryId}</b>`);
    expect(task.metadata).toEqual({ source: "helpdesk" });
    expect((task as TaskBody & { trigger: unknown }).trigger).toEqual({
      hook_id: hookId,
      delivery_id: deliveryId,
      event: null,
    });

    // The sender retries the same delivery (a new signature, a later timestamp): the same task, no second run.
    const again = await deliver(hookId, body, standardHeaders(body, deliveryId, new Date(Date.now() + 1000)));
    expect(again.status).toBe(200);
    expect((await again.json()) as Receipt).toMatchObject({ task_id: receipt.task_id, duplicate: true });
  });

  it("refuses a bad, missing or stale signature with 401 and starts nothing", async () => {
    const hookId = hookAgent({ scheme: "standard", secret: "TEST_STANDARD_HOOK_SECRET", input: "{{payload.x}}" });
    const body = '{"x": "hello"}';
    const cases: [Record<string, string>, string][] = [
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
    const task = await waitForTask(((await res.json()) as Receipt).task_id);
    expect(task.input).toBe(`Review the push to acme/site ${marker} (push):\n- Fix header\n- Add footer`);
    expect(task.status).toBe("completed");

    const ping = '{"zen": "Keep it logically awesome."}';
    const pong = await deliver(hookId, ping, await githubHeaders(ping, "ping"));
    expect(pong.status).toBe(200);
    expect(await pong.json()).toEqual({ hook_id: hookId, status: "pong" });

    const issue = '{"action": "opened"}';
    const ignored = await deliver(hookId, issue, await githubHeaders(issue, "issues"));
    expect(ignored.status).toBe(200);
    expect(await ignored.json()).toMatchObject({ status: "ignored" });

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
    expect((await waitForTask(((await res.json()) as Receipt).task_id)).input).toBe(`form ${marker}`);
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
    const { task_id } = (await res.json()) as Receipt;
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
    expect((await api(`/v1/tasks/${task_id}/resume`, { method: "POST", body: '{"action": "approve"}' })).status).toBe(
      200,
    );
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
});
