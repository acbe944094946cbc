// The web console in a real browser: headless Chromium (Debian's, through playwright-core) against the Worker under
// wrangler dev, as a person uses it. Each test saves a screenshot under .tmp/ when it fails. What the pages' server
// side answers (headers, no data without a key) is tested in workerd, test/console/pages.test.ts.
import { mkdirSync } from "node:fs";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it, type TestContext } from "vitest";
import { launchChromium } from "../../bench/chromium.ts";
import { e2eClient, marker, outpostUrl, scriptModel } from "./support/harness.ts";
import { E2E_ADMIN_KEY, E2E_AGENTS_KEY } from "./support/keys.ts";

let browser: Browser;
/** Closed after every test has run: a failed test's page must stay open for its screenshot. */
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  browser = await launchChromium();
});

afterAll(async () => {
  for (const context of contexts) await context.close();
  await browser?.close();
});

/** A fresh page (its own sessionStorage) that leaves a screenshot in .tmp/ if the test fails. */
async function newPage(context: TestContext): Promise<Page> {
  const browserContext = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await browserContext.newPage();
  contexts.push(browserContext);
  context.onTestFailed(async () => {
    mkdirSync(".tmp", { recursive: true });
    const name = context.task.name.replace(/[^a-z0-9]+/gi, "-").slice(0, 80);
    await page.screenshot({ path: `.tmp/console-${name}.png`, fullPage: true });
  });
  return page;
}

async function signIn(page: Page, path = "/console", key = E2E_ADMIN_KEY): Promise<void> {
  await page.goto(`${outpostUrl()}${path}`);
  await page.getByLabel("API key").fill(key);
  await page.getByRole("button", { name: "Sign in" }).click();
}

/** Waits until `locator` is visible and its text is exactly `text` (text streams in, so it is waited for, then read). */
async function textOf(page: Page, selector: string, text: string): Promise<string | null> {
  const locator = page.locator(selector).filter({ hasText: text }).first();
  await locator.waitFor();
  return locator.textContent();
}

/** The page's own view of where the key is kept (run in the page; this file has no DOM types). */
interface StorageGlobal {
  sessionStorage: { getItem(key: string): string | null };
  localStorage: { length: number };
  document: { cookie: string };
}

describe("the console", () => {
  it("signs in, starts a task, streams it, approves its pending call with one click and shows the result", async (context) => {
    const page = await newPage(context);
    const tag = marker("console-approve");
    // The tool input carries markup: the console must show it as text.
    const hostile = '<img src=x id="injected" onerror="document.title=1">';
    await scriptModel(
      tag,
      [
        {
          content: [
            { type: "text", text: "I will write the task list now." },
            {
              type: "tool_use",
              name: "TodoWrite",
              input: { todos: [{ content: `Fix it ${hostile}`, status: "pending" }] },
            },
          ],
        },
        { content: [{ type: "text", text: "The list is saved; start with the failing test." }] },
      ],
      { token_delay_ms: 5 },
    );

    await signIn(page, "/console", "not-a-key");
    await page.getByText("That key was not accepted.").waitFor();
    await page.getByLabel("API key").fill(E2E_ADMIN_KEY);
    await page.getByRole("button", { name: "Sign in" }).click();

    await page.locator("#new-agent").selectOption("triage");
    await page.getByLabel("Input").fill(`Triage this issue ${tag}`);
    await page.getByRole("button", { name: "Start", exact: true }).click();
    await page.waitForURL(/\/console\/tasks\/[^/]+$/);
    const taskId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");

    // The streamed text, then the panel for the waiting call, bound to the request the task shows.
    expect(await textOf(page, ".timeline .message.assistant", "I will write the task list now.")).toBe(
      "AgentI will write the task list now.",
    );
    const panel = page.locator("section.pending");
    await panel.waitFor();
    const waiting = await e2eClient().tasks.get(taskId);
    expect(waiting.status).toBe("input_required");
    expect(await panel.getAttribute("data-request-id")).toBe(waiting.pending_input?.request_id);
    expect(await panel.locator("pre").textContent()).toContain(`"content": "Fix it ${hostile.replace(/"/g, '\\"')}"`);

    await panel.getByRole("button", { name: "Approve" }).click();

    await page.locator('main[data-status="completed"]').waitFor();
    expect(await page.locator(".task-head .result").textContent()).toBe(
      "The list is saved; start with the failing test.",
    );
    // decided_by names the key that answered (its id in the key ring).
    expect(await textOf(page, ".ev.decision", "Approved by")).toBe("Approved by e2e-admin");
    expect(await page.locator(".ev.tool[data-state=ok] .tool-name").allTextContents()).toEqual(["TodoWrite"]);
    expect(await page.locator("section.pending").count()).toBe(0);
    const done = await e2eClient().tasks.get(taskId);
    expect(done.status).toBe("completed");
    expect(done.result).toBe("The list is saved; start with the failing test.");

    // The markup stayed text, and the key is in this tab's sessionStorage only.
    expect(await page.locator("#injected").count()).toBe(0);
    expect(page.url()).not.toContain(E2E_ADMIN_KEY);
    const storage = await page.evaluate(() => {
      const g = globalThis as unknown as StorageGlobal;
      return {
        session: g.sessionStorage.getItem("outpost.apiKey"),
        local: g.localStorage.length,
        cookie: g.document.cookie,
      };
    });
    expect(storage).toEqual({ session: E2E_ADMIN_KEY, local: 0, cookie: "" });
  });

  it("shows Outpost's 409 when the request it shows was answered elsewhere, and answers nothing", async (context) => {
    const page = await newPage(context);
    const tag = marker("console-stale");
    await scriptModel(tag, [
      { content: [{ type: "tool_use", name: "TodoWrite", input: { todos: [{ content: "a", status: "pending" }] } }] },
      { content: [{ type: "text", text: "Done." }] },
    ]);
    const client = e2eClient();
    const created = await client.tasks.create("triage", { input: `Triage ${tag}` });
    const waiting = await client.wait(created.id, { until: "ended_or_input", timeoutMs: 30_000 });
    const requestId = waiting.pending_input?.request_id ?? "none";

    // This page never hears of the other answer: its event stream is cut, as a slow network would.
    await page.route(/\/v1\/tasks\/[^/]+\/events/, (route) => route.abort());
    await signIn(page, `/console/tasks/${created.id}`);
    await page.locator("section.pending").waitFor();
    expect(await page.locator("section.pending").getAttribute("data-request-id")).toBe(requestId);

    await client.tasks.resume(created.id, { request_id: requestId, action: "approve" });
    await page.locator("section.pending").getByRole("button", { name: "Reject" }).click();

    const notice = page.locator("p.error[data-code=already_decided]");
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(
      /^Your answer was not applied: .+ \(already_decided\)\. What waits now is shown below\.$/,
    );
    const task = await client.wait(created.id, { timeoutMs: 30_000 });
    expect(task.status).toBe("completed");
  });

  it("shows a task's share of input read from the prompt cache, with the split of its input tokens", async (context) => {
    const page = await newPage(context);
    const tag = marker("console-cache");
    // 200 tokens uncached, 1,200 written to the cache, 8,600 read from it: 8,600 of 10,000 input tokens, 86%.
    const scripted = {
      input_tokens: 200,
      output_tokens: 10,
      cache_creation_input_tokens: 1200,
      cache_read_input_tokens: 8600,
    };
    await scriptModel(tag, [{ content: [{ type: "text", text: "Mostly from the cache." }], usage: scripted }]);
    const client = e2eClient();
    const created = await client.tasks.create("assistant", { input: `Answer ${tag}` });
    await client.wait(created.id, { timeoutMs: 30_000 });

    await signIn(page, `/console/tasks/${created.id}`);
    await page.locator('main[data-stream="ended"]').waitFor();
    await page.locator('main[data-status="completed"]').waitFor();
    const split = "Input tokens: 200 plain · 1200 cache write · 8600 cache read";
    // The header: all the input, the share (its tooltip the split), the cost, and the split on a line below.
    const usage = page.locator("#task-usage");
    expect(await usage.locator(".cache-share").textContent()).toBe("cache 86%");
    expect(await usage.locator(".cache-share").getAttribute("title")).toBe(split);
    expect(await usage.locator(".usage-split").textContent()).toBe(split);
    expect(await usage.textContent()).toMatch(/^10000 tokens in · 10 out · cache 86% · \$[\d.]+Input tokens: /);
    // The model call's row and the run's end say the same.
    expect(await page.locator(".ev.usage").textContent()).toMatch(
      /^Model call · 10000 in \/ 10 out · cache 86% · \$[\d.]+ · \d+ ms$/,
    );
    expect(await page.locator(".ev.end p.muted").textContent()).toMatch(
      /^10000 tokens in · 10 out · 1 model calls · cache 86% · \$[\d.]+$/,
    );
    const timelineShares = page.locator(".ev .cache-share");
    expect(await timelineShares.count()).toBe(2);
    for (const i of [0, 1]) expect(await timelineShares.nth(i).getAttribute("title")).toBe(split);
  });

  it("shows a task that waits out its model provider in the list and on its page, live until the next try", async (context) => {
    const page = await newPage(context);
    const m = marker("console-provider-wait");
    const tag = `waits-${crypto.randomUUID().slice(0, 8)}`;
    // Refused with a retry-after long enough to park the call on its timer (docs/provider-waits.md), then answered
    // a few seconds late, so that the task still runs when its wait is over.
    const overloaded = { kind: "http", status: 529, retry_after: 10 };
    const answer = { content: [{ type: "text" as const, text: "After the outage." }], faults: [overloaded] };
    await scriptModel(m, [answer], { ttft_ms: 5_000 });
    const client = e2eClient();
    const created = await client.tasks.create("assistant", { input: `Answer ${m}`, tags: [tag] });

    // The list: a label beside the status (the list is re-read every few seconds).
    await signIn(page, `/console?tag=${tag}`);
    const label = page.locator(`tr[data-task-id="${created.id}"] .waiting-label`);
    await label.waitFor({ timeout: 8_000 });
    expect(await label.textContent()).toBe("waiting for provider");

    // The task's page: the notice, and the wait on the timeline; both follow the run as the call is tried again.
    await page.locator(`tr[data-task-id="${created.id}"] a`).click();
    const notice = page.locator("p.waiting");
    await notice.waitFor();
    expect(await notice.textContent()).toMatch(
      /^Waiting for the model provider until .+ — 1 try so far; last error: .+ \(provider_overloaded\)$/,
    );
    expect(await page.locator('.ev[data-type="provider_wait_started"]').textContent()).toMatch(
      /^Waiting for the model provider until .+: .+$/,
    );
    const ended = page.locator('.ev[data-type="provider_wait_ended"]');
    await ended.waitFor({ timeout: 20_000 });
    expect(await ended.textContent()).toBe("Trying the model provider again");
    await notice.waitFor({ state: "detached" });
    expect(await page.locator("main").getAttribute("data-status")).toBe("running");
    await page.locator('main[data-status="completed"]').waitFor({ timeout: 20_000 });
    expect((await client.wait(created.id, { timeoutMs: 30_000 })).result).toBe("After the outage.");
  });

  it("forks a new task from a checkpoint with one click and opens it", async (context) => {
    const page = await newPage(context);
    const tag = marker("console-fork");
    await scriptModel(tag, [
      { content: [{ type: "text", text: "First answer." }] },
      { content: [{ type: "text", text: "Again." }] },
    ]);
    const client = e2eClient();
    const created = await client.tasks.create("assistant", { input: `Answer ${tag}` });
    await client.wait(created.id, { timeoutMs: 30_000 });

    await signIn(page, `/console/tasks/${created.id}`);
    await page.locator('main[data-stream="ended"]').waitFor();
    // A run that neither wrote nor read the prompt cache: its usage says nothing of a cache.
    expect(await page.locator("#task-usage").textContent()).toMatch(/^\d+ tokens in · \d+ out · \$[\d.]+$/);
    expect(await page.locator(".cache-share").count()).toBe(0);
    await page.locator(".ev.checkpoint").first().getByRole("button", { name: "Fork from here" }).click();

    await page.waitForURL((url) => url.pathname.startsWith("/console/tasks/") && !url.pathname.endsWith(created.id));
    expect(await textOf(page, ".facts a", created.id)).toBe(created.id);
    const forkId = decodeURIComponent(new URL(page.url()).pathname.split("/").pop() ?? "");
    expect((await client.tasks.get(forkId)).parent_task_id).toBe(created.id);
  });

  it("shows a sub-agent's events in a branch under the call that started it", async (context) => {
    const page = await newPage(context);
    const tag = marker("console-tree");
    const childTag = marker("console-tree-child");
    // The tenant's own agents, a parent that may delegate to a child, under a tenant of their own (E2E_AGENTS_KEY).
    const client = e2eClient(E2E_AGENTS_KEY);
    await client.request("PUT", "/v1/agents/console_child", {
      body: {
        name: "console_child",
        description: "Answers a part.",
        instructions: "Answer in a line.",
        claude: { max_turns: 2 },
      },
    });
    await client.request("PUT", "/v1/agents/console_parent", {
      body: {
        name: "console_parent",
        description: "Delegates.",
        instructions: "Delegate with Task.",
        claude: { max_turns: 3, subagents: { enabled: true, agents: ["console_child"] } },
      },
    });
    await scriptModel(tag, [
      {
        content: [
          {
            type: "tool_use",
            name: "Task",
            input: { agent: "console_child", description: "the first part", prompt: `${childTag} Do the first part.` },
          },
        ],
      },
      { content: [{ type: "text", text: "Both levels are done." }] },
    ]);
    await scriptModel(childTag, [{ content: [{ type: "text", text: "The child's own answer." }] }]);
    const created = await client.tasks.create("console_parent", { input: `Split ${tag}` });
    await client.wait(created.id, { timeoutMs: 30_000 });

    await signIn(page, `/console/tasks/${created.id}`, E2E_AGENTS_KEY);
    await page.locator('main[data-stream="ended"]').waitFor();
    const branch = page.locator(".ev.subagent");
    expect(await branch.count()).toBe(1);
    expect(await branch.locator("summary").textContent()).toBe("console_child completed the first part");
    expect(await textOf(page, ".ev.subagent .message.assistant", "The child's own answer.")).toBe(
      "AgentThe child's own answer.",
    );
    // The parent's own answer stays at the top level, outside the branch.
    expect(await page.locator(".timeline > .message.assistant").allTextContents()).toEqual([
      "AgentBoth levels are done.",
    ]);
  });

  it("chats: Enter sends the message, and the agent's answer streams into the conversation", async (context) => {
    const page = await newPage(context);
    await signIn(page, "/console/sessions");
    await page.getByLabel("Agent").selectOption("assistant");
    await page.getByRole("button", { name: "Start chatting" }).click();
    await page.waitForURL(/\/console\/sessions\/[^/]+$/);

    await page.getByLabel("Message", { exact: true }).fill("Hello from the console");
    await page.getByLabel("Message", { exact: true }).press("Enter");

    expect(await textOf(page, ".timeline .message.user", "Hello from the console")).toBe("YouHello from the console");
    expect(await textOf(page, ".timeline .message.assistant", "You said: Hello from the console")).toBe(
      "Agent(emulator) You said: Hello from the console",
    );
    expect(await page.getByLabel("Message", { exact: true }).inputValue()).toBe("");
  });
});
