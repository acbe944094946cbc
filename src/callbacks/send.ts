// One attempt at a delivery: a signed POST to the receiver, judged first by the callback policy in force now. The
// receiver's answer is never read: only its status counts, so nothing a receiver (or an internal host) says can reach
// the delivery log, which keeps the status, the timing and an error class.
import type { DeliveryErrorClass } from "./delivery.ts";
import { type CallbackPolicy, judgeCallbackUrl } from "./policy.ts";
import { signatureHeaders } from "./signing.ts";

const ATTEMPT_TIMEOUT_MS = 10_000;

/** How an attempt ended: the receiver's status (null without an answer), and why it failed (null when delivered). */
export interface AttemptOutcome {
  statusCode: number | null;
  errorClass: DeliveryErrorClass | null;
  error: string | null;
}

/** What one POST needs to know of its delivery: its id (the webhook-id), its URL and its stored payload (JSON). */
export interface Sendable {
  id: string;
  url: string;
  payload: string;
  /** Headers of the target besides the signature (an A2A push config's token and authentication). */
  headers?: Record<string, string>;
}

/**
 * One POST of the delivery, judged by `policy` (the one in force now). Its answer's body is cancelled unread.
 * `redact` is applied to the payload again as it leaves: deliveries stored before payloads were redacted are sent
 * clean too.
 */
export async function sendDelivery(
  delivery: Sendable,
  secret: string | undefined,
  startedAt: Date,
  options: { policy: () => CallbackPolicy; redact: <T>(value: T) => T },
): Promise<AttemptOutcome> {
  const failed = (errorClass: DeliveryErrorClass, error: string) => ({ statusCode: null, errorClass, error });
  if (!secret) return failed("not_signed", "OUTPOST_WEBHOOK_SECRET is not set, so the callback cannot be signed.");
  const judged = judgeCallbackUrl(delivery.url, options.policy());
  if (judged.problem !== undefined) return failed("blocked_url", `the callback URL is not allowed: ${judged.problem}`);
  const body = JSON.stringify(options.redact(JSON.parse(delivery.payload) as unknown));
  const deadline = AbortSignal.timeout(ATTEMPT_TIMEOUT_MS);
  let response: Response;
  try {
    response = await fetch(judged.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "user-agent": "Outpost/0.1",
        ...delivery.headers,
        ...signatureHeaders(delivery.id, startedAt, body, secret),
      },
      body,
      // A redirect is an answer, not a delivery: receivers give their final URL.
      redirect: "manual",
      signal: deadline,
    });
  } catch (caught) {
    if (deadline.aborted) return failed("timeout", `no answer within ${ATTEMPT_TIMEOUT_MS / 1000} s`);
    return failed("connection_failed", caught instanceof Error ? caught.message : String(caught));
  }
  await response.body?.cancel().catch(() => undefined);
  const status = response.status;
  if (status >= 200 && status < 300) return { statusCode: status, errorClass: null, error: null };
  const redirect = status >= 300 && status < 400 ? "; redirects are not followed" : "";
  return { statusCode: status, errorClass: "http_status", error: `the receiver answered ${status}${redirect}` };
}
