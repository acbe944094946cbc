// Helpers for tests of outbound callbacks: what the real receiver of test/support/callback-receiver.ts got, the task's
// delivery log read through the API until it reaches the state a test waits for, and a callback's payload checked
// against its schema.

import { expect, inject } from "vitest";
import type { Delivery } from "../../src/callbacks/delivery.ts";
import { type CallbackPayload, CallbackPayloadSchema } from "../../src/callbacks/payload.ts";
import { DeliveryListSchema } from "../../src/http/responses.ts";
import { api, checkBody } from "./helpers.ts";

export const receiver = inject("receiverUrl");

export interface Received {
  headers: Record<string, string>;
  body: string;
  status: number;
}

/**
 * A callback's payload (what a receiver got, or a delivery's), checked against the callback schema and of `type`;
 * another type fails the test.
 */
export function callbackOf<T extends CallbackPayload["type"]>(
  payload: unknown,
  type: T,
): Extract<CallbackPayload, { type: T }> {
  const checked = checkBody(CallbackPayloadSchema, payload);
  if (checked.type !== type) throw new Error(`expected a ${type} callback, got ${checked.type}`);
  return checked as Extract<CallbackPayload, { type: T }>;
}

/** A receiver path of its own for one test (names are word characters and dashes). */
export function inbox(label: string): string {
  return `${label}-${crypto.randomUUID()}`;
}

export async function received(name: string): Promise<Received[]> {
  return (await (await fetch(`${receiver}/r/${name}`)).json()) as Received[];
}

/** GET /v1/tasks/:id/deliveries: the parsed body and its raw text (to search it for what must not be there). */
export async function deliveryLog(id: string, key?: string): Promise<{ deliveries: Delivery[]; text: string }> {
  const res = await api(`/v1/tasks/${id}/deliveries`, key ? { key } : {});
  expect(res.status).toBe(200);
  const text = await res.text();
  return { deliveries: checkBody(DeliveryListSchema, JSON.parse(text)).deliveries, text };
}

/** Polls the delivery log until `done` holds (deliveries run from the task's alarm), or 15 s have passed. */
export async function deliveriesUntil(
  id: string,
  done: (list: Delivery[]) => boolean,
  key?: string,
): Promise<Delivery[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const { deliveries } = await deliveryLog(id, key);
    if (done(deliveries) || Date.now() > deadline) return deliveries;
    await new Promise((r) => setTimeout(r, 50));
  }
}
