import { describe, expect, it } from "vitest";
import { api, eventTypes, readSse, script, startTask, uniqueMarker, waitForTask } from "./helpers.ts";

describe("smoke", () => {
  it("runs the assistant end to end", async () => {
    const marker = uniqueMarker("smoke");
    await script(marker, [{ content: [{ type: "text", text: "Hello from the emulator." }] }]);
    const task = await startTask("assistant", `say hi ${marker}`);
    expect(task.status).toBe("pending");
    const done = await waitForTask(task.id);
    expect(done.status).toBe("completed");
    expect(done.result).toBe("Hello from the emulator.");
    const frames = await readSse(await api(`/v1/tasks/${task.id}/events`));
    console.log(eventTypes(frames));
  });
});
