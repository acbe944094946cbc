// Worker secrets that an agent's definition names (a hook's verification secret, an MCP server's header, a model
// provider's API key): the one rule for which names a definition may use, and the one way the Worker and the task's
// object read a secret by name. The rule is checked twice: when the agent is defined (a bad name is a ConfigError
// at deploy time) and again at every read, so no path around the definition's schema can reach Outpost's own
// secrets. The rule and its reasons: docs/reference/configuration.md, "Secrets an agent's definition names".
import { z } from "zod";

/** How a secret's name is written: upper case, digits and '_', so a key pasted in place of its name is refused. */
const SECRET_NAME = /^[A-Z][A-Z0-9_]*$/;

/**
 * Who reads the secret a definition names. Outpost's Anthropic credentials (ANTHROPIC_*) are read by the Anthropic
 * provider only: anywhere else they would be sent to another server (an MCP server, another provider's endpoint) or
 * become the key a webhook sender proves it knows.
 */
export type SecretReader = "anthropic_provider" | "other";

export const RESERVED_SECRET_MESSAGE = "cannot be one of Outpost's own secrets";

/**
 * Whether `reader` may not read the secret `name`: OUTPOST_* (API keys, the webhook signing root, …) never, by any
 * reader; ANTHROPIC_* only by the Anthropic provider.
 */
export function isReservedSecret(name: string, reader: SecretReader): boolean {
  if (name.startsWith("OUTPOST_")) return true;
  return name.startsWith("ANTHROPIC_") && reader !== "anthropic_provider";
}

/**
 * A secret's name in a definition, format only (`example` shows a good one). A field whose reader depends on another
 * field (llmConfig.api_key: the provider) checks isReservedSecret itself; the others use secretName.
 */
export function secretNameFormat(example: string): z.ZodString {
  return z.string().regex(SECRET_NAME, `must be the NAME of a Worker secret (e.g. ${example})`);
}

/** A secret's name in a definition whose reader is not the Anthropic provider. */
export function secretName(example: string) {
  return secretNameFormat(example).refine((name) => !isReservedSecret(name, "other"), RESERVED_SECRET_MESSAGE);
}

/** Reads a secret by name; `reader` says who asks (isReservedSecret). */
export type SecretLookup = (name: string, reader?: SecretReader) => string | undefined;

/**
 * The value of the secret `name` in the Worker's environment, or undefined when it is unset, empty, not a string (a
 * binding) or a name `reader` may not read.
 */
export function readSecret(env: object, name: string, reader: SecretReader = "other"): string | undefined {
  if (isReservedSecret(name, reader)) return undefined;
  const value = (env as Record<string, unknown>)[name];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/** A SecretLookup over the Worker's environment. */
export function secretLookup(env: object): SecretLookup {
  return (name, reader) => readSecret(env, name, reader);
}
