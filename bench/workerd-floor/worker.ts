// The workerd floor: what the floor's loop (bench/floor.ts: the bare SDK, the planner's request, TodoWrite) costs
// when it runs where Outpost's tasks run, in a Durable Object of its own per run on the same `workerd serve`. The
// difference between it and Outpost is Outpost's own work; the difference between it and the Node floor is the
// platform's (a new object, its isolate's turns, workerd's I/O).
//
// GET / answers "ok"; POST /runs/<id>?persist=1&stall=1&wait=0&record=1
// - persist=1: each message of the conversation is written to the object's SQLite before the next model call (the
//   least a durable loop does: one commit per step, and the call waits for it);
// - stall=1: the first message carries the emulator's stall marker (a model call that does not answer: the memory
//   phase);
// - wait=0: answers once the run has started rather than when it ends;
// - record=1: once the run ends, its conversation is written as one object to the run store (Outpost's blob store:
//   R2 under wrangler dev, the disk service on workerd serve), the least of the record Outpost keeps of every run.

import { DurableObject } from "cloudflare:workers";
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { type BlobStoreBindings, openBlobStore } from "../../src/blob-store/open-blob-store.ts";
import { STALL_MARKER } from "../config.ts";
import { createFloorClient, type FloorOptions, runFloorTask } from "../floor.ts";

interface FloorEnv extends BlobStoreBindings {
  FLOOR: DurableObjectNamespace<FloorObject>;
  ANTHROPIC_BASE_URL: string;
}

interface RunOptions {
  persist: boolean;
  stall: boolean;
  wait: boolean;
  record: boolean;
}

export class FloorObject extends DurableObject<FloorEnv> {
  async run(runId: string, options: RunOptions): Promise<void> {
    const floor: FloorOptions = options.stall ? { marker: STALL_MARKER } : {};
    const messages: MessageParam[] = [];
    const sql = options.persist ? this.ctx.storage.sql : undefined;
    sql?.exec("CREATE TABLE IF NOT EXISTS messages (idx INTEGER PRIMARY KEY, message TEXT NOT NULL)");
    floor.onMessage = (message, index) => {
      messages.push(message);
      sql?.exec("INSERT INTO messages (idx, message) VALUES (?, ?)", index, JSON.stringify(message));
    };
    const run = runFloorTask(createFloorClient(this.env.ANTHROPIC_BASE_URL), runId, floor).then(async () => {
      if (options.record) {
        await openBlobStore(this.env).put(`runs/${runId}/messages.json`, JSON.stringify(messages, null, 2));
      }
    });
    if (options.wait) {
      await run;
      return;
    }
    // The object stays in memory while its call is open.
    this.ctx.waitUntil(run.catch(() => undefined));
  }
}

export default {
  async fetch(request: Request, env: FloorEnv): Promise<Response> {
    const url = new URL(request.url);
    // A readiness answer, for a launcher that waits for one (the bench's wrangler dev waits for GET / to answer 200).
    if (request.method === "GET" && url.pathname === "/") return new Response("ok");
    const id = /^\/runs\/([\w.-]+)$/.exec(url.pathname)?.[1];
    if (request.method !== "POST" || id === undefined) return new Response("POST /runs/<id>", { status: 404 });
    const flag = (name: string, absent: boolean) => (url.searchParams.get(name) ?? (absent ? "1" : "0")) === "1";
    const stub = env.FLOOR.get(env.FLOOR.idFromName(id));
    try {
      await stub.run(id, {
        persist: flag("persist", false),
        stall: flag("stall", false),
        wait: flag("wait", true),
        record: flag("record", false),
      });
      return Response.json({ id });
    } catch (error) {
      return Response.json({ error: error instanceof Error ? error.message : String(error) }, { status: 500 });
    }
  },
};
