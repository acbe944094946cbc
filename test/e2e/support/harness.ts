// What an end-to-end test needs: the deployment's URL, a client with one of its keys, and the model emulator's
// replies scripted over HTTP (the same POST /_emulator/scripts the workerd tests use, docs/development/emulator.md).
import { inject } from "vitest";
import { createOutpostClient, type OutpostClient } from "../../../client/src/index.ts";
import type { ScriptTurn } from "../../support/helpers.ts";
import { E2E_ADMIN_KEY } from "./keys.ts";

export const outpostUrl = (): string => inject("outpostUrl");
export const emulatorUrl = (): string => inject("e2eEmulatorUrl");

export function e2eClient(apiKey: string = E2E_ADMIN_KEY): OutpostClient {
  return createOutpostClient({ baseUrl: outpostUrl(), apiKey });
}

/** The emulator answers a conversation whose first user message contains `match` with these turns, in order. */
export async function scriptModel(
  match: string,
  turns: ScriptTurn[],
  options: { ttft_ms?: number; token_delay_ms?: number; prompt_cache?: boolean } = {},
): Promise<void> {
  const res = await fetch(`${emulatorUrl()}/_emulator/scripts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ match, turns, ...options }),
  });
  if (res.status !== 201) throw new Error(`emulator script registration failed: ${res.status} ${await res.text()}`);
}

/** A marker unique to one test, put in its input so the emulator picks that test's script. */
export const marker = (name: string): string => `[e2e-${name}-${crypto.randomUUID()}]`;
