import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, script, startTask, uniqueMarker } from "./helpers.ts";

describe("probe", () => {
  it("probe", async () => {
    for (const [h, q] of [
      ["abc", undefined],
      [undefined, "-1"],
      [undefined, "1.5"],
    ] as const) {
      const headers: Record<string, string> = {};
      if (h) headers["last-event-id"] = h;
      const res = await api(`/v1/tasks/${crypto.randomUUID()}/events${q ? `?after=${q}` : ""}`, { headers });
      console.log(res.status, await res.text());
    }
    const res404 = await api(`/v1/tasks/${crypto.randomUUID()}/events`);
    console.log(res404.status, await res404.text());
    const marker = uniqueMarker("probe");
    const words = Array.from({ length: 30 }, (_, i) => `w${i}`).join(" ");
    await script(marker, [{ content: [{ type: "text", text: words }] }], { token_delay_ms: 1500 });
    const task = await startTask("assistant", `go ${marker}`);
    const stub = env.TASKS.get(env.TASKS.idFromName(task.id));
    const res = await api(`/v1/tasks/${task.id}/events`);
    const reader = res.body!.getReader();
    const dec = new TextDecoder();
    let text = "";
    while (!text.includes("llm_text_delta")) {
      const { value } = await reader.read();
      text += dec.decode(value);
    }
    const size = () =>
      runInDurableObject(
        stub,
        (inst) => (inst as unknown as { events: { listeners: Set<unknown> } }).events.listeners.size,
      );
    console.log("listeners before cancel", await size());
    await reader.cancel();
    await new Promise((r) => setTimeout(r, 50));
    console.log("listeners after cancel", await size());
    const r2 = await api(`/v1/tasks/${task.id}?wait=20`);
    console.log(r2.status, ((await r2.json()) as { status: string }).status);
    expect(1).toBe(1);
  });
});
