// Where the CLI connects and with which key: --url/--api-key, else OUTPOST_URL/OUTPOST_API_KEY, else `npm run dev`'s
// server and key (only for a server on this machine, so a forgotten key never goes to a remote deployment). The key
// is never printed: not in errors, not in --json output.
import { CliError, EXIT } from "./exit-codes.ts";

/** `npm run dev`'s address and the key it prints (scripts/dev.ts). */
export const DEV_URL = "http://127.0.0.1:8787";
export const DEV_API_KEY = "dev-key";

export interface CliConfig {
  baseUrl: string;
  apiKey: string;
}

export function resolveConfig(
  flags: { url?: string | undefined; apiKey?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): CliConfig {
  const raw = flags.url ?? nonEmpty(env.OUTPOST_URL) ?? DEV_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CliError("invalid_url", `Not a URL: ${raw} (set --url or OUTPOST_URL).`, EXIT.usage, "url");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new CliError("invalid_url", `The URL must be http or https: ${raw}.`, EXIT.usage, "url");
  }
  const apiKey = flags.apiKey ?? nonEmpty(env.OUTPOST_API_KEY) ?? (isLoopback(url) ? DEV_API_KEY : undefined);
  if (apiKey === undefined) {
    throw new CliError(
      "missing_api_key",
      `No API key for ${url.origin}: set OUTPOST_API_KEY (or pass --api-key).`,
      EXIT.usage,
      "api_key",
    );
  }
  return { baseUrl: url.href.replace(/\/+$/, ""), apiKey };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === "" ? undefined : value;
}

function isLoopback(url: URL): boolean {
  return ["127.0.0.1", "localhost", "[::1]"].includes(url.hostname);
}
