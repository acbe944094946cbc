// Helpers for tests of outbound callbacks: what the real receiver of test/callback-receiver.ts got, and the task's
// delivery log read through the API until it reaches the state a test waits for.

import { expect, inject } from "vitest";
import type { DeliveryAttempt } from "../src/callbacks/callbacks.ts";
import { api } from "./helpers.ts";

export const receiver = inject("receiverUrl");

export interface Received {
  headers: Record<string, string>;
  body: string;
  status: number;
}

export interface DeliveryBody {
  id: string;
  event_type: string;
  event_seq: number;
  url: string;
  status: string;
  attempts: DeliveryAttempt[];
  next_attempt_at: string | null;
  created_at: string;
  payload: { type: string; data: Record<string, unknown> };
}

/** A receiver path of its own for one test (names are word characters and dashes). */
export function inbox(label: string): string {
  return `${label}-${crypto.randomUUID()}`;
}

export async function received(name: string): Promise<Received[]> {
  return (await (await fetch(`${receiver}/r/${name}`)).json()) as Received[];
}

/** GET /v1/tasks/:id/deliveries: the parsed body and its raw text (to search it for what must not be there). */
export async function deliveryLog(id: string, key?: string): Promise<{ deliveries: DeliveryBody[]; text: string }> {
  const res = await api(`/v1/tasks/${id}/deliveries`, key ? { key } : {});
  expect(res.status).toBe(200);
  const text = await res.text();
  return { deliveries: (JSON.parse(text) as { deliveries: DeliveryBody[] }).deliveries, text };
}

/** Polls the delivery log until `done` holds (deliveries run from the task's alarm), or 15 s have passed. */
export async function deliveriesUntil(
  id: string,
  done: (list: DeliveryBody[]) => boolean,
  key?: string,
): Promise<DeliveryBody[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { deliveries } = await deliveryLog(id, key);
    if (done(deliveries) || Date.now() > deadline) return deliveries;
    await new Promise((r) => setTimeout(r, 50));
  }
}
