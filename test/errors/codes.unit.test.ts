// The error-code registry (src/errors/codes.ts) is the only list of codes: ApiError takes its status from it,
// OutpostError its retryability, the providers their failure texts; tsc refuses a code it does not hold and a switch
// over RPC failure codes that leaves one out (the @ts-expect-error lines below fail `npm run check` otherwise); and
// every code it holds is raised somewhere (no dead codes).
import { describe, expect, it } from "vitest";
import {
  ERROR_CODES,
  type ErrorCode,
  type ErrorCodeSpec,
  httpStatus,
  type RequestErrorCode,
  unhandledCode,
} from "../../src/errors/codes.ts";
import { ApiError, LimitExceededError, McpConnectionError, NetworkError, OutpostError } from "../../src/errors.ts";
import { providerFailure } from "../../src/llm/provider.ts";

const codes = Object.entries(ERROR_CODES) as [ErrorCode, ErrorCodeSpec][];

/** The source of the Worker and its Durable Objects, without the registry itself. */
const sources: string = Object.entries(
  import.meta.glob<string>(["../../src/**/*.ts", "../../durable-objects/*.ts"], {
    query: "?raw",
    import: "default",
    eager: true,
  }),
)
  .filter(([path]) => !path.endsWith("/errors/codes.ts"))
  .map(([, text]) => text)
  .join("\n");

describe("the error-code registry", () => {
  it("gives every code at least one place to appear, and a one-line when for each", () => {
    for (const [code, spec] of codes) {
      const facets = [spec.request, spec.task, spec.event, spec.internal].filter((f) => f !== undefined);
      expect(facets.length, code).toBeGreaterThan(0);
      for (const facet of facets) expect(facet.when, code).toMatch(/^[^\n]{10,}$/);
    }
  });

  it("holds only codes that the code raises", () => {
    expect(codes.map(([code]) => code).filter((code) => !sources.includes(`"${code}"`))).toEqual([]);
  });

  it("answers every request error with its own status", () => {
    const request = codes.filter(([, spec]) => spec.request).map(([code]) => code as RequestErrorCode);
    expect(request.map((code) => [code, new ApiError(code, "m").status])).toEqual(
      request.map((code) => [code, ERROR_CODES[code].request.status]),
    );
    expect([httpStatus("rate_limited"), httpStatus("task_not_found"), httpStatus("internal_error")]).toEqual([
      429, 404, 500,
    ]);
  });

  it("gives each error the registry's retryability unless the error says otherwise", () => {
    expect(new NetworkError("n").retryable).toBe(true);
    expect(new McpConnectionError("s", "m").retryable).toBe(true);
    expect(new LimitExceededError("max_turns", "l").retryable).toBe(false);
    const base = { status: 500, requestId: null, cause: null };
    expect(providerFailure("provider_error", "d", base).retryable).toBe(false);
    expect(providerFailure("provider_error", "d", base, { retryable: true }).retryable).toBe(true);
  });

  it("opens a provider failure's message with the registry's text", () => {
    const error = providerFailure("rate_limited", "slow down", { status: 429, requestId: null, cause: null });
    expect([error.code, error.message, error.retryable]).toEqual([
      "rate_limited",
      "The model provider is rate limiting requests: slow down",
      true,
    ]);
  });

  it("refuses a code it does not hold, at compile time and at run time", () => {
    // @ts-expect-error: not a code of the registry
    expect(() => new ApiError("conflict", "m")).toThrow(TypeError);
    // @ts-expect-error: a task failure, not a request error, so no route may answer with it
    expect(() => new ApiError("max_turns", "m")).toThrow(TypeError);
    // @ts-expect-error: not a code of the registry
    expect(() => new OutpostError("no_such_code", "m")).toThrow(TypeError);
  });

  it("refuses, at compile time, a switch over RPC failure codes that leaves one out", () => {
    const route = (code: "task_not_found" | "task_already_finished"): string => {
      switch (code) {
        case "task_not_found":
          return "404";
        default:
          // @ts-expect-error: task_already_finished is not handled
          return unhandledCode(code);
      }
    };
    expect(route("task_not_found")).toBe("404");
    expect(() => route("task_already_finished")).toThrow(new TypeError("Unhandled error code: task_already_finished"));
  });
});
