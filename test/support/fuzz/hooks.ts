// The inbound hooks the fuzz tests deliver to: importing this module registers an agent with a Standard Webhooks
// hook and a GitHub one, named with a random suffix so that each test file (each isolate) has its own.
import { defineAgent } from "../helpers.ts";

const hookSuffix = crypto.randomUUID().slice(0, 8);
export const STANDARD_HOOK = `fuzz-standard-${hookSuffix}`;
export const GITHUB_HOOK = `fuzz-github-${hookSuffix}`;
defineAgent({
  hooks: {
    [STANDARD_HOOK]: { scheme: "standard", secret: "TEST_STANDARD_HOOK_SECRET", input: "Fuzz {{payload}}" },
    [GITHUB_HOOK]: { scheme: "github", secret: "TEST_GITHUB_HOOK_SECRET", input: "Fuzz {{payload}}" },
  },
});
