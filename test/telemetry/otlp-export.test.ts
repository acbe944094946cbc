// The exporter's configuration (OUTPOST_OTEL_ENDPOINT, OUTPOST_OTEL_HEADERS) and telemetry off, the default: this
// file runs in the "workers" project, whose deployment sets no endpoint. The spans themselves are checked with export
// on, in test/telemetry/genai-spans.test.ts (project "telemetry").
import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ConfigError } from "../../src/errors.ts";
import type { EventRecord } from "../../src/events/event-record.ts";
import { otelConfig, otlpHeaders } from "../../src/telemetry/otlp-export.ts";
import { TELEMETRY_EXPORTED_KEY } from "../../src/telemetry/run-telemetry.ts";
import {
  api,
  defineAgent,
  errorOf,
  parseEvent,
  readSse,
  script,
  settledAlarm,
  startTask,
  stubFor,
  uniqueMarker,
  waitForTask,
} from "../support/helpers.ts";

/** The task's own events, as its stream sends them. */
async function records(id: string): Promise<EventRecord[]> {
  return (await readSse(await api(`/v1/tasks/${id}/events`))).map((frame) => parseEvent(frame.data));
}

describe("the exporter's configuration", () => {
  it("is off without an endpoint, and posts to <endpoint>/v1/traces with the configured headers", () => {
    expect(otelConfig({})).toBeNull();
    expect(otelConfig({ OUTPOST_OTEL_ENDPOINT: " " })).toBeNull();
    const config = otelConfig({
      OUTPOST_OTEL_ENDPOINT: "https://otel.example.com:4318/",
      OUTPOST_OTEL_HEADERS: "Authorization=Bearer%20abc, x-scope=ops",
    });
    expect(config?.tracesUrl.href).toBe("https://otel.example.com:4318/v1/traces");
    expect(config?.headers).toEqual({ authorization: "Bearer abc", "x-scope": "ops" });
    expect(otelConfig({ OUTPOST_OTEL_ENDPOINT: "https://collector.example/otlp" })?.tracesUrl.href).toBe(
      "https://collector.example/otlp/v1/traces",
    );
  });

  it("takes a private collector without OUTPOST_ALLOW_PRIVATE_HOSTS (the endpoint is the operator's), but only over http(s) and without credentials", () => {
    expect(otelConfig({ OUTPOST_OTEL_ENDPOINT: "http://127.0.0.1:4318" })?.tracesUrl.href).toBe(
      "http://127.0.0.1:4318/v1/traces",
    );
    expect(otelConfig({ OUTPOST_OTEL_ENDPOINT: "http://localhost:4318/otlp/" })?.tracesUrl.href).toBe(
      "http://localhost:4318/otlp/v1/traces",
    );
    const scheme = errorOf(() => otelConfig({ OUTPOST_OTEL_ENDPOINT: "ftp://otel.example.com" }));
    expect(scheme).toBeInstanceOf(ConfigError);
    expect(scheme.message).toBe("OUTPOST_OTEL_ENDPOINT is not allowed: the scheme ftp: is not http or https.");
    const credentials = errorOf(() => otelConfig({ OUTPOST_OTEL_ENDPOINT: "https://user:pw@otel.example.com" }));
    expect(credentials).toBeInstanceOf(ConfigError);
    // The reason alone: the message is logged, and the URL holds a password.
    expect(credentials.message).toBe("OUTPOST_OTEL_ENDPOINT is not allowed: credentials in URLs are not accepted.");
  });

  it("refuses a malformed header list without quoting its values", () => {
    const bad = errorOf(() => otlpHeaders("authorization=Bearer topsecret,no-equals-sign"));
    expect(bad).toBeInstanceOf(ConfigError);
    expect(bad.message).toBe("OUTPOST_OTEL_HEADERS: entry 2 is not name=value with a valid header name.");
    const encoding = errorOf(() => otlpHeaders("x-key=topsecret%zz"));
    expect(encoding.message).toBe("OUTPOST_OTEL_HEADERS: the value of x-key is not valid percent-encoding.");
    expect(otlpHeaders("")).toEqual({});
  });
});

describe("telemetry off", () => {
  it("sends nothing and records nothing when no endpoint is configured", async () => {
    expect(env.OUTPOST_OTEL_ENDPOINT).toBe("");
    const agent = defineAgent({});
    const marker = uniqueMarker("otel-off");
    await script(marker, [{ content: [{ type: "text", text: "quiet" }] }]);
    const task = await startTask(agent, `Answer ${marker}`);
    expect((await waitForTask(task.id)).status).toBe("completed");
    // The alarm after the run (bundle upload, where an export would go) has run: only the expiry alarm is left.
    const expiresAt = Date.parse(String((await waitForTask(task.id)).expires_at));
    expect(await settledAlarm(task.id, expiresAt)).toBe(expiresAt);
    const traceId = (await records(task.id))[0]?.trace_id as string;
    const collector = `${env.ANTHROPIC_BASE_URL}/_emulator/traces`;
    expect(await (await fetch(`${collector}?trace_id=${traceId}`)).json()).toEqual({ spans: [] });
    expect(await (await fetch(`${collector}?task_id=${task.id}`)).json()).toEqual({ spans: [] });
    const stored = await runInDurableObject(stubFor(task.id), (_instance, s) => ({
      flushed: s.storage.sql.exec("SELECT bundle_flushed FROM task").one().bundle_flushed,
      exported: s.storage.sql.exec("SELECT key FROM task_state WHERE key = ?", TELEMETRY_EXPORTED_KEY.name).toArray(),
    }));
    expect(stored).toEqual({ flushed: 1, exported: [] });
  });
});
