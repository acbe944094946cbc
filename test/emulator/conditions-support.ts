// What the service-condition tests (conditions.test.ts, conditions-refusals.test.ts) share: the official clients of
// the three wires pointed at the emulator, a raw request per wire, and the emulator's stats of a script.
import { env } from "cloudflare:workers";
import Anthropic from "@anthropic-ai/sdk";
import { GoogleGenAI } from "@google/genai";
import OpenAI from "openai";
import { expect } from "vitest";

export const emulatorUrl = env.ANTHROPIC_BASE_URL ?? "";
export const clientFetch = (input: RequestInfo | URL, init?: RequestInit) => fetch(input, init);
export const anthropic = new Anthropic({ apiKey: "test", baseURL: emulatorUrl, fetch: clientFetch, maxRetries: 0 });
export const openai = new OpenAI({ apiKey: "test", baseURL: `${emulatorUrl}/v1`, fetch: clientFetch, maxRetries: 0 });
export const gemini = new GoogleGenAI({
  apiKey: "test",
  httpOptions: { baseUrl: emulatorUrl, fetch: clientFetch, retryOptions: { attempts: 1 } },
});

export type Wire = "anthropic" | "openai" | "gemini";
export const WIRES: readonly Wire[] = ["anthropic", "openai", "gemini"];

export function uniqueMarker(label: string): string {
  return `[cond-${label}-${crypto.randomUUID()}]`;
}

export async function register(script: Record<string, unknown>): Promise<Response> {
  return fetch(`${emulatorUrl}/_emulator/scripts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(script),
  });
}

/** Registers a script of text replies, one per turn, with the given conditions. */
export async function script(marker: string, conditions: Record<string, unknown>, turns?: unknown[]): Promise<void> {
  const content = [{ type: "text", text: "ok" }];
  const response = await register({ match: marker, turns: turns ?? [{ content }, { content }], ...conditions });
  expect(response.status).toBe(201);
}

/** Each wire's endpoint, key header and body for a user text and an output cap (each wire's own field). */
export const REQUESTS: Record<
  Wire,
  { path: string; key: Record<string, string>; body: (text: string, cap: number) => unknown }
> = {
  anthropic: {
    path: "/v1/messages",
    key: { "x-api-key": "test" },
    body: (text, cap) => ({ model: "emu-model", max_tokens: cap, messages: [{ role: "user", content: text }] }),
  },
  openai: {
    path: "/v1/chat/completions",
    key: { authorization: "Bearer test" },
    body: (text, cap) => ({ model: "emu-model", max_tokens: cap, messages: [{ role: "user", content: text }] }),
  },
  gemini: {
    path: "/v1beta/models/gemini-emu:generateContent",
    key: { "x-goog-api-key": "test" },
    body: (text, cap) => ({
      contents: [{ role: "user", parts: [{ text }] }],
      generationConfig: { maxOutputTokens: cap },
    }),
  },
};

/** One request of the script `marker` on a wire, raw, asking for `maxTokens` of output. */
export function send(wire: Wire, marker: string, maxTokens = 256): Promise<Response> {
  const { path, key, body } = REQUESTS[wire];
  return fetch(`${emulatorUrl}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...key },
    body: JSON.stringify(body(`${marker} go`, maxTokens)),
  });
}

/** Sends until a request is answered 200 (at most `within` ms), polling every 25 ms; returns that response. */
export async function untilAnswered(wire: Wire, marker: string, within: number): Promise<Response> {
  const deadline = Date.now() + within;
  for (;;) {
    const response = await send(wire, marker);
    if (response.status === 200 || Date.now() > deadline) return response;
    await response.body?.cancel();
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

export interface StatsRecord {
  status: number;
  turn: number;
  fault: string | null;
  refusal: string | null;
  usage: Record<string, number> | null;
}

export async function statsOf(marker: string): Promise<{ requests: StatsRecord[]; refusals: Record<string, unknown> }> {
  const response = await fetch(`${emulatorUrl}/_emulator/stats?match=${encodeURIComponent(marker)}`);
  expect(response.status).toBe(200);
  return (await response.json()) as { requests: StatsRecord[]; refusals: Record<string, unknown> };
}

export async function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => {
      throw new Error("expected a rejection");
    },
    (error: unknown) => error,
  );
}

export const RFC3339 = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/;
export const ANTHROPIC_RATE_LIMIT =
  "This request would exceed the rate limit for your organization of 2 requests per minute. For details, refer to: " +
  "https://docs.anthropic.com/en/api/rate-limits. You can see the response headers for current usage. Please reduce " +
  "the prompt length or the maximum tokens requested, or try again later. You may also contact sales at " +
  "https://www.anthropic.com/contact-sales to discuss your options for a rate limit increase.";
