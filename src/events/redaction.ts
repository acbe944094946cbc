// Redaction (seed 002 EventRecord.redaction_mode). Two things:
// 1. Secrets never reach the record of a run: the deployment's secret values (every Worker secret Outpost or an
//    agent's configuration can name), well-known credential shapes and the operator's patterns
//    (OUTPOST_REDACT_PATTERNS) are replaced by [REDACTED] in events, transcripts, artifacts and the final summary.
// 2. A task in `redacted` mode keeps prompts and responses out of its public event stream: the content fields of
//    its events are replaced, and each record says redaction_mode "redacted"; the private transcript (the run
//    bundle's llm_transcript.log and per-call request/response files) keeps them, minus secrets.

export const REDACTED = "[REDACTED]";
export type RedactionMode = "full" | "redacted";
export const REDACTION_MODES = ["full", "redacted"] as const;

/** Credential shapes worth catching wherever they turn up (tool output, a model's echo, an error message). */
const BUILT_IN_PATTERNS: readonly RegExp[] = [
  /sk-ant-[A-Za-z0-9_-]{10,}/g,
  /\bgh[pousr]_[A-Za-z0-9]{30,}\b/g,
  /\bgithub_pat_[A-Za-z0-9_]{30,}\b/g,
  /\b(?:AKIA|ASIA)[0-9A-Z]{16}\b/g,
  /\bwhsec_[A-Za-z0-9+/=]{16,}/g,
  /\bxox[abprs]-[A-Za-z0-9-]{10,}/g,
  /\b[rs]k_live_[A-Za-z0-9]{16,}\b/g,
  // Outpost API keys as the README makes them (op_ and 48 hex digits): the key list holds only their digests.
  /\bop_[0-9a-f]{48}\b/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
];
/**
 * An Authorization header's value, as written in a log line, a curl command or a JSON dump (escaped quotes
 * included: JSON inside JSON). The value stops at a backslash, so an escaped quote after it stays whole and the
 * file stays valid JSON.
 */
const AUTH_HEADER =
  /((?:proxy-)?authorization(?:\\*["'])?\s*[:=]\s*(?:\\*["'])?)(?:(?:bearer|basic|token)\s+)?[^\s"',;\\]+/gi;

/** Worker variables that are configuration, not secrets (see wrangler.toml [vars]). */
const NOT_SECRET = new Set([
  "ANTHROPIC_BASE_URL",
  "OUTPOST_DEFAULT_MODEL",
  "OUTPOST_PRICES",
  "OUTPOST_ALLOW_PRIVATE_HOSTS",
  "OUTPOST_RETENTION",
  "OUTPOST_RATE_LIMIT_PER_MINUTE",
  "OUTPOST_HTTP_CALLBACK_HOSTS",
  "OUTPOST_CALLBACK_RETRY_SECONDS",
  "OUTPOST_REDACT_PATTERNS",
]);
/** Shorter values are not treated as secrets: replacing "true" or "60" everywhere would wreck the record. */
const MIN_SECRET_LENGTH = 8;

/** Which fields of which events are prompts and responses (replaced in redacted mode). */
const CONTENT_FIELDS: Readonly<Record<string, readonly string[]>> = {
  task_created: ["input"],
  run_started: ["task"],
  llm_text_delta: ["text"],
  llm_thinking_delta: ["thinking"],
  llm_response_received: ["response_preview"],
  tool_call_started: ["input"],
  tool_call_completed: ["output_preview", "details"],
  todo_list_updated: ["todos"],
  mcp_tool_call_started: ["arguments"],
  mcp_tool_call_completed: ["output_preview", "structured_content", "step_result"],
  run_finished: ["final_summary"],
  input_requested: ["input", "question"],
  human_decision: ["message", "tool_input", "state_updates"],
  llm_decision_decoded: ["reasoning_summary", "planned_actions"],
  skill_step_executed: ["command", "output_preview"],
  skill_invocation_finished: ["step_results"],
  final_answer_synthesis_completed: ["summary_preview"],
};

export class Redactor {
  private readonly secrets: readonly string[];
  private readonly patterns: readonly RegExp[];

  /** One case-insensitive test for every shape at once: most strings (token deltas, ids) match none. */
  private readonly anyShape: RegExp;
  /** The secrets as they appear inside JSON text (quotes and backslashes escaped). */
  private readonly jsonSecrets: readonly string[];
  /** The operator's patterns may match raw text that JSON escapes (a quote, a newline): those are always walked. */
  private readonly hasOperatorPatterns: boolean;

  constructor(secrets: Iterable<string>, patterns: readonly RegExp[] = []) {
    // Longest first, so a secret that contains another is replaced whole.
    this.secrets = [...new Set([...secrets].filter((s) => s.length >= MIN_SECRET_LENGTH))].sort(
      (a, b) => b.length - a.length,
    );
    this.patterns = [...BUILT_IN_PATTERNS, ...patterns];
    this.anyShape = new RegExp([AUTH_HEADER, ...this.patterns].map((p) => `(?:${p.source})`).join("|"), "i");
    this.jsonSecrets = this.secrets.map((s) => JSON.stringify(s).slice(1, -1));
    this.hasOperatorPatterns = patterns.length > 0;
  }

  /**
   * Whether serialized JSON might hold something to redact: false means value() would change nothing, so the hot
   * path (every event) skips walking the payload.
   */
  mightNeedRedaction(json: string): boolean {
    // The built-in shapes match the same way in a string and in its JSON form (or, for headers and keys, in the part
    // before anything JSON escapes); the operator's own patterns make no such promise.
    if (this.hasOperatorPatterns) return true;
    return this.jsonSecrets.some((s) => json.includes(s)) || this.anyShape.test(json);
  }

  /** The deployment's redactor: its secret values (every env string that is not configuration) and patterns. */
  static fromEnv(env: object): Redactor {
    const secrets: string[] = [];
    for (const [name, value] of Object.entries(env as Record<string, unknown>)) {
      if (typeof value !== "string" || NOT_SECRET.has(name)) continue;
      secrets.push(value);
      // A plain key list: each key is a secret of its own.
      if (name === "OUTPOST_API_KEYS" && !value.trim().startsWith("["))
        secrets.push(...value.split(",").map((k) => k.trim()));
    }
    return new Redactor(secrets, parsePatterns((env as Record<string, unknown>).OUTPOST_REDACT_PATTERNS));
  }

  text(value: string): string {
    let out = value;
    for (const secret of this.secrets) if (out.includes(secret)) out = out.split(secret).join(REDACTED);
    // A superset test (case-insensitive): when it finds nothing, no pattern below can.
    if (!this.anyShape.test(out)) return out;
    out = out.replace(AUTH_HEADER, `$1${REDACTED}`);
    for (const pattern of this.patterns) {
      pattern.lastIndex = 0;
      if (pattern.test(out)) {
        pattern.lastIndex = 0;
        out = out.replace(pattern, REDACTED);
      }
    }
    return out;
  }

  /** Every string inside `value`, redacted (keys too: a header map keeps no secret in its names either). */
  value<T>(value: T): T {
    return this.walk(value, 0) as T;
  }

  private walk(value: unknown, depth: number): unknown {
    if (typeof value === "string") return this.text(value);
    if (value === null || typeof value !== "object" || depth > 64) return value;
    if (Array.isArray(value)) return value.map((item) => this.walk(item, depth + 1));
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[this.text(key)] = this.walk(item, depth + 1);
    return out;
  }
}

/** OUTPOST_REDACT_PATTERNS: a JSON list of regular expressions. A bad one is logged and skipped, never fatal. */
export function parsePatterns(source: unknown): RegExp[] {
  if (typeof source !== "string" || !source.trim()) return [];
  let list: unknown;
  try {
    list = JSON.parse(source);
  } catch {
    console.error("OUTPOST_REDACT_PATTERNS is not a JSON list of regular expressions; ignored");
    return [];
  }
  if (!Array.isArray(list)) return [];
  const patterns: RegExp[] = [];
  for (const [index, item] of list.entries()) {
    try {
      if (typeof item !== "string" || !item) throw new Error("not a non-empty string");
      patterns.push(new RegExp(item, "g"));
    } catch (error) {
      console.error(`OUTPOST_REDACT_PATTERNS[${index}] ignored: ${error instanceof Error ? error.message : error}`);
    }
  }
  return patterns;
}

/** An event's payload as its task's mode shows it: in redacted mode, its prompt and response fields replaced. */
export function redactContent(
  eventType: string,
  payload: Record<string, unknown>,
  mode: RedactionMode,
): Record<string, unknown> {
  if (mode === "full") return payload;
  const fields = CONTENT_FIELDS[eventType];
  if (!fields) return payload;
  const out = { ...payload };
  for (const field of fields) if (field in out && out[field] !== null) out[field] = REDACTED;
  return out;
}
