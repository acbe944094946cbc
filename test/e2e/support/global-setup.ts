// The end-to-end project's outside world (vitest.config.ts, project "e2e"): the model emulator and the Worker under
// `wrangler dev`, started once for the run, in Node, as a user runs them with `npm run dev`. The tests reach both over
// real HTTP: the client, the CLI and the console speak to Outpost exactly as they do in use.
import { resolve } from "node:path";
import type { TestProject } from "vitest/node";
import { startWrangler } from "../../../bench/wrangler.ts";
import { startEmulator } from "../../../emulator/server.ts";
import { e2eKeyRing } from "./keys.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** http://127.0.0.1:<port> of `wrangler dev` serving the Worker. */
    outpostUrl: string;
    /** The model emulator (the Anthropic API's wire protocol; POST /_emulator/scripts scripts its replies). */
    e2eEmulatorUrl: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const emulator = await startEmulator({ quiet: true });
  const dev = await startWrangler({
    root: resolve(import.meta.dirname, "../../.."),
    vars: {
      ANTHROPIC_BASE_URL: emulator.url,
      ANTHROPIC_API_KEY: "e2e-model-key",
      OUTPOST_API_KEYS: e2eKeyRing(),
      OUTPOST_RATE_LIMIT_PER_MINUTE: "100000",
      OUTPOST_ALLOW_PRIVATE_HOSTS: "127.0.0.1",
      // As npm run dev: the shipped agents' faulted test cases run (outpost test).
      OUTPOST_FAULT_INJECTION: "on",
      // The knowledge tools' embeddings, from the emulator (as npm run dev does without an OpenAI key).
      OPENAI_BASE_URL: `${emulator.url}/v1`,
      OPENAI_API_KEY: "e2e-embeddings-key",
    },
  }).catch(async (error: unknown) => {
    await emulator.close();
    throw error;
  });
  project.provide("outpostUrl", dev.url);
  project.provide("e2eEmulatorUrl", emulator.url);
  return async () => {
    await dev.stop();
    await emulator.close();
  };
}
