// The README stays true to the code: its event table lists exactly the event vocabulary, and its error table every
// HTTP error the Worker can answer with, at the same status.
import { describe, expect, it } from "vitest";
import readme from "../README.md?raw";
import { EVENT_TYPES } from "../src/events/event-record.ts";
import app from "../src/http/app.ts?raw";
import auth from "../src/http/auth.ts?raw";
import errors from "../src/http/errors.ts?raw";
import agentRoutes from "../src/http/routes/agents.ts?raw";
import hookRoutes from "../src/http/routes/hooks.ts?raw";
import taskRoutes from "../src/http/routes/tasks.ts?raw";
import tenantRoutes from "../src/http/routes/tenant.ts?raw";
import taskCreation from "../src/http/task-creation.ts?raw";
import validation from "../src/http/validation.ts?raw";
import callbacks from "../src/webhooks/callbacks.ts?raw";

describe("README", () => {
  it("documents every event type in the vocabulary, and no other", () => {
    const section = readme.slice(readme.indexOf("### Events"), readme.indexOf("### Run bundle"));
    const documented = section
      .split("\n")
      .filter((line) => line.startsWith("| `"))
      .flatMap((line) => [...(line.split("|")[1] ?? "").matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
    expect(new Set(documented)).toEqual(new Set(EVENT_TYPES));
  });
});

describe("README error table", () => {
  it("lists every ApiError the Worker raises, with its status", () => {
    const raised = new Map<string, string>();
    const sources = [auth, errors, agentRoutes, taskRoutes, hookRoutes, tenantRoutes, taskCreation, validation, app];
    for (const source of [...sources, callbacks]) {
      for (const m of source.matchAll(/ApiError\(\s*(\d{3}),\s*"([a-z_]+)"/g)) raised.set(m[2] ?? "", m[1] ?? "");
    }
    // Codes that come back from the task's object as values, and the registry's own error.
    raised.set("task_already_finished", "409");
    raised.set("agent_not_found", "404");
    raised.set("internal_error", "500");
    // A webhook delivery's verification failures (src/hooks/hook.ts VerifyFailure), all answered 401.
    for (const code of ["signature_missing", "signature_invalid", "timestamp_out_of_tolerance"])
      raised.set(code, "401");
    const table = readme.slice(readme.indexOf("### Errors"), readme.indexOf("A failed task's"));
    const documented = new Map(
      [...table.matchAll(/^\| (\d{3}) +\| `([a-z_]+)`/gm)].map((m) => [m[2] ?? "", m[1] ?? ""] as const),
    );
    expect(raised.size).toBeGreaterThanOrEqual(12);
    expect(documented).toEqual(raised);
  });
});
