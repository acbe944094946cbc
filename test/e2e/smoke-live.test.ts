// `npm run smoke:live` (scripts/smoke-live.ts), the check an operator runs once after a deploy against the real model
// provider, run here against the Worker under `wrangler dev` with the emulator standing in for the provider and
// billing its prompt cache as Anthropic's API does (docs/development/emulator.md).
import { execFile } from "node:child_process";
import { resolve } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { outpostUrl, scriptModel } from "./support/harness.ts";
import { E2E_SMOKE_KEY } from "./support/keys.ts";

const run = promisify(execFile);
const SCRIPT = resolve(import.meta.dirname, "../../scripts/smoke-live.ts");
/** The smoke agent's system prompt opens so; the emulator's script for its calls matches on it. */
const SMOKE_PROMPT = "You are Outpost's smoke test.";

/** Runs the script with these variables (and none of the shell's own OUTPOST_*), returning its output and exit code. */
async function smoke(vars: Record<string, string>): Promise<{ code: number; out: string; err: string }> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("OUTPOST_")));
  try {
    const { stdout, stderr } = await run(process.execPath, [SCRIPT], { env: { ...env, ...vars }, timeout: 60_000 });
    return { code: 0, out: stdout, err: stderr };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, out: failed.stdout ?? "", err: failed.stderr ?? "" };
  }
}

describe("npm run smoke:live", () => {
  it("says it checked nothing, and succeeds, without a deployment to check", async () => {
    const { code, out } = await smoke({});
    expect(code).toBe(0);
    expect(out).toMatch(/^smoke:live: not run\. Set OUTPOST_URL .* nothing was checked\.\n$/);
  });

  it("checks cache reads on the second call, usage as billed and cost at list prices", async () => {
    // The provider answers the smoke agent's calls, billing them with its prompt cache.
    await scriptModel(SMOKE_PROMPT, [{ content: [{ type: "text", text: "ready" }] }], { prompt_cache: true });
    const { code, out, err } = await smoke({ OUTPOST_URL: outpostUrl(), OUTPOST_API_KEY: E2E_SMOKE_KEY });
    expect(err).toBe("");
    expect(out).toContain("smoke:live: all 7 checks passed");
    expect(out).toMatch(
      /^ok {3}task 2 \(.*\): the second call reads the agent's prefix from the cache: [1-9]\d* tokens/m,
    );
    expect(code).toBe(0);
  });

  it("fails, naming the check, when the second call reads nothing from the cache", async () => {
    // Now a provider that caches nothing (the emulator's scripted usage, with no prompt cache).
    await scriptModel(SMOKE_PROMPT, [{ content: [{ type: "text", text: "ready" }] }]);
    const { code, out, err } = await smoke({ OUTPOST_URL: outpostUrl(), OUTPOST_API_KEY: E2E_SMOKE_KEY });
    expect(err).toBe("");
    expect(out).toMatch(/^FAIL task 2 \(.*\): the second call reads the agent's prefix from the cache: 0 tokens/m);
    expect(out).toContain("smoke:live: 1 of 7 checks failed");
    expect(code).toBe(1);
  });
});
