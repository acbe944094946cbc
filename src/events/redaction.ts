// Redaction (seed 002 EventRecord.redaction_mode). Two things:
// 1. Secrets never reach the record of a run: the deployment's secret values (every Worker secret Outpost or an
//    agent's configuration can name), well-known credential shapes (keys, Authorization headers, a URL's user
//    information) and the operator's patterns
//    (OUTPOST_REDACT_PATTERNS) are replaced by [REDACTED] in events, transcripts, artifacts and the final summary.
// 2. A task in `redacted` mode keeps prompts and responses out of its public event stream: the content fields of
//    its events are replaced, and each record says redaction_mode "redacted"; the private transcript (the run
//    bundle's llm_transcript.log and per-call request/response files) keeps them, minus secrets.
import { EVENT_CATALOG, EVENT_TYPES } from "../contracts/events.ts";

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
  // Outpost API keys as docs/operations/tenants-and-keys.md makes them (op_ and 48 hex digits): the key list holds only their digests.
  /\bop_[0-9a-f]{48}\b/g,
  /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
  // A private key cut short (a preview, a truncated output): everything from its header on.
  /-----BEGIN [A-Z ]*PRIVATE KEY-----(?![\s\S]*-----END [A-Z ]*PRIVATE KEY-----)[\s\S]*/g,
];
/**
 * An Authorization header's value, as written in a log line, a curl command or a JSON dump (escaped quotes
 * included: JSON inside JSON). The value stops at a backslash, so an escaped quote after it stays whole and the
 * file stays valid JSON. A JSON literal (`"authorization": null`) is no credential, and replacing it would not be valid
 * JSON.
 */
const AUTH_HEADER =
  /((?:proxy-)?authorization(?:\\*["'])?\s*[:=]\s*(?:\\*["'])?)(?!(?:null|true|false)\b)(?:(?:bearer|basic|token)\s+)?[^\s"',;\\]+/gi;

/**
 * A URL's user information (`https://user:password@host`, `https://token@host`): the credentials a clone URL, a
 * database URL or a proxy setting carries. Replaced whole, the scheme and the host kept, so the URL still says where
 * it points. It ends at the `@` before the host; a `/`, `?` or `#` comes first in a URL that has none.
 */
const URL_USERINFO = /(\b[a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'\\<>]+(?=@)/gi;
/**
 * A URL whose authority (where user information would be) has not ended yet, at the very end of the text, or the
 * start of one (`https:`, `https:/`) whose slashes have not all arrived.
 */
const URL_AUTHORITY_OPEN = /\b[a-z][a-z0-9+.-]*:(?:\/\/[^\s/?#@"'\\<>]*|\/?)$/i;

/**
 * Text that none of these literals occurs in holds no built-in shape: each of BUILT_IN_PATTERNS, AUTH_HEADER and
 * URL_USERINFO matches only text that contains one (in the case that pattern matches: `authorization` in any case).
 * Literals are what V8's regular expressions search fastest for: this test costs about a sixth of anyShape's over
 * the same text (0.5 against 3.1 ns a byte), and most text (a request, a transcript, an event) holds none of them.
 * Keep it in step with the patterns above: test/events/redaction.test.ts checks each shape is still found.
 */
const BUILT_IN_LITERALS =
  /sk-ant-|gh[pousr]_|github_pat_|A[KS]IA|whsec_|xox[abprs]-|k_live_|op_[0-9a-f]|-----BEGIN|[Aa][Uu][Tt][Hh][Oo][Rr][Ii][Zz][Aa][Tt][Ii][Oo][Nn]|:\/\//;

/** Worker variables that are configuration, not secrets (see wrangler.toml [vars]). */
const NOT_SECRET = new Set([
  "ANTHROPIC_BASE_URL",
  "OUTPOST_DEFAULT_MODEL",
  "OUTPOST_PRICES",
  "OUTPOST_ALLOW_PRIVATE_HOSTS",
  "OUTPOST_TENANT_PRIVATE_HOSTS",
  "OUTPOST_MAX_RUNTIME_AGENTS",
  "OUTPOST_MAX_AGENT_VERSIONS",
  "OUTPOST_FAULT_INJECTION",
  "OUTPOST_RETENTION",
  "OUTPOST_RATE_LIMIT_PER_MINUTE",
  "OUTPOST_MAX_SCHEDULES_PER_TENANT",
  "OUTPOST_SCHEDULE_MIN_INTERVAL_SECONDS",
  "OUTPOST_ALLOWED_ORIGINS",
  "OUTPOST_MAX_TREE_SUBAGENTS",
  "OUTPOST_DEFAULT_TREE_BUDGET_USD",
  "OUTPOST_HTTP_CALLBACK_HOSTS",
  "OUTPOST_CALLBACK_ALLOW_PRIVATE_HOSTS",
  "OUTPOST_CALLBACK_RETRY_SECONDS",
  "OUTPOST_DIRECTORY_REPORT_MS",
  "OUTPOST_PROVIDER_WAIT_SECONDS",
  "OUTPOST_REDACT_PATTERNS",
  "OUTPOST_OTEL_ENDPOINT",
  "OPENAI_BASE_URL",
  "AZURE_OPENAI_ENDPOINT",
]);
/** Shorter values are not treated as secrets: replacing "true" or "60" everywhere would wreck the record. */
const MIN_SECRET_LENGTH = 8;
/**
 * How deep value() walks. Deeper values are not kept as they are (they could hide anything): the whole subtree is
 * replaced by NESTED_TOO_DEEP. Request bodies are capped well below this, so only runtime data can reach it.
 */
const MAX_WALK_DEPTH = 64;
export const NESTED_TOO_DEEP = "[REDACTED: nested too deep to check]";

/**
 * Streamed text: a run of characters that credentials are made of, still growing at the end of what has arrived,
 * is held back until it ends. No credential shape is longer than this; a longer run (minified code, base64) is
 * released up to this many characters from its end, so a watcher is never kept waiting for it.
 */
const MAX_TOKEN_HOLD = 1024;
/**
 * The longest secret held back whole: a private key block waits for its end line, a growing match for its end, for
 * at most this much text. Real keys are a few KiB; a longer match is released (each event is still redacted on its
 * own, an open private key from its header to the event's end), so a stream is never held back without bound, nor
 * rescanned forever.
 */
const MAX_SECRET_HOLD = 16 * 1024;
/** Streamed text with the operator's own patterns, whose shapes are unknown: this much is always held back. */
const OPERATOR_PATTERN_HOLD = 256;
/** The characters of credentials and tokens (keys, base64, URL-safe base64, JWT parts, PEM dashes). */
const TRAILING_TOKEN = /[A-Za-z0-9_\-+/=.~]*$/;
/** An Authorization header whose value has not arrived yet, at the very end of the text. */
const AUTH_HEADER_OPEN =
  /(?:proxy-)?authorization(?:\\*["'])?\s*(?:[:=]\s*(?:\\*["'])?\s*(?:(?:bearer|basic|token)\s*)?)?$/i;
/** A private key's header, complete or not, with no end line after it. */
const PEM_OPEN =
  /-----BEGIN(?: [A-Z ]*(?:-{1,5})?)?$|-----BEGIN [A-Z ]*PRIVATE KEY-----(?![\s\S]*-----END [A-Z ]*PRIVATE KEY-----)/;

/** Which fields of which events are prompts and responses (replaced in redacted mode): the catalog's content fields. */
const CONTENT_FIELDS: ReadonlyMap<string, readonly string[]> = new Map(
  EVENT_TYPES.map((type): [string, readonly string[]] => [type, EVENT_CATALOG[type].content]).filter(
    ([, fields]) => fields.length > 0,
  ),
);

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
    this.anyShape = new RegExp(
      [AUTH_HEADER, URL_USERINFO, ...this.patterns].map((p) => `(?:${p.source})`).join("|"),
      "i",
    );
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
    return this.jsonSecrets.some((s) => json.includes(s)) || this.mayHoldShape(json);
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
    // A superset test: when it finds nothing, no pattern below can.
    if (!this.mayHoldShape(out)) return out;
    out = out.replace(AUTH_HEADER, `$1${REDACTED}`).replace(URL_USERINFO, `$1${REDACTED}`);
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

  /**
   * How many leading characters of streamed text can be released now (llm_text_delta events), so that no secret is
   * ever split between two events, where the per-event redaction could not see it whole. Held back, with everything
   * after it: a token that may still grow, an Authorization header without its value, a private key without its
   * end line, the start of a deployment secret, and any match that reaches past the cut. The caller releases the
   * rest when the block ends.
   */
  releasable(text: string): number {
    let cut = text.length;
    const token = TRAILING_TOKEN.exec(text);
    if (token && text.length - token.index <= MAX_TOKEN_HOLD) cut = token.index;
    else cut = text.length - MAX_TOKEN_HOLD;
    if (this.hasOperatorPatterns) cut = Math.min(cut, text.length - OPERATOR_PATTERN_HOLD);
    // Until nothing moves the cut: each rule can expose a new end for the others.
    for (let previous = -1; previous !== cut && cut > 0; ) {
      previous = cut;
      const head = text.slice(0, cut);
      const pem = PEM_OPEN.exec(head);
      if (pem && text.length - pem.index <= MAX_SECRET_HOLD) cut = Math.min(cut, pem.index);
      const auth = AUTH_HEADER_OPEN.exec(head);
      if (auth) cut = Math.min(cut, auth.index);
      const url = URL_AUTHORITY_OPEN.exec(head);
      if (url && text.length - url.index <= MAX_TOKEN_HOLD) cut = Math.min(cut, url.index);
      for (const secret of this.secrets) {
        // The longest end of the head that begins this secret (a secret may hold characters no token has).
        const first = secret.charAt(0);
        for (let at = head.indexOf(first, Math.max(0, head.length - secret.length + 1)); at !== -1; ) {
          if (secret.startsWith(head.slice(at))) {
            cut = Math.min(cut, at);
            break;
          }
          at = head.indexOf(first, at + 1);
        }
      }
      cut = Math.max(0, Math.min(cut, this.firstStraddle(text, cut)));
    }
    return Math.max(0, cut);
  }

  /**
   * The start of the earliest match in `text` that begins before `cut` and ends after it, or at the very end of what
   * has arrived (a match there may still grow: an Authorization value takes characters no token has); or `cut`.
   */
  private firstStraddle(text: string, cut: number): number {
    let earliest = cut;
    const consider = (start: number, end: number) => {
      if (end - start > MAX_SECRET_HOLD) return;
      if (start < cut && (end > cut || end === text.length)) earliest = Math.min(earliest, start);
    };
    for (const secret of this.secrets) {
      for (let at = text.indexOf(secret); at !== -1 && at < cut; at = text.indexOf(secret, at + 1)) {
        consider(at, at + secret.length);
      }
    }
    if (!this.mayHoldShape(text)) return earliest;
    for (const pattern of [AUTH_HEADER, URL_USERINFO, ...this.patterns]) {
      const global = new RegExp(pattern.source, pattern.flags.includes("g") ? pattern.flags : `${pattern.flags}g`);
      for (const match of text.matchAll(global)) {
        if (match.index >= cut) break;
        consider(match.index, match.index + match[0].length);
      }
    }
    return earliest;
  }

  /**
   * Whether `text` may hold a credential shape or an operator's pattern: false means none of them matches it. The
   * built-in shapes are ruled out by their literals first; the operator's own patterns have none known.
   */
  private mayHoldShape(text: string): boolean {
    if (!this.hasOperatorPatterns && !BUILT_IN_LITERALS.test(text)) return false;
    return this.anyShape.test(text);
  }

  private walk(value: unknown, depth: number): unknown {
    if (typeof value === "string") return this.text(value);
    if (value === null || typeof value !== "object") return value;
    // Fail closed: what is too deep to check is not kept.
    if (depth > MAX_WALK_DEPTH) return NESTED_TOO_DEEP;
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
  const fields = CONTENT_FIELDS.get(eventType);
  if (!fields) return payload;
  const out = { ...payload };
  for (const field of fields) if (field in out && out[field] !== null) out[field] = REDACTED;
  return out;
}
