// The LLM transcript (seed 002 LlmTranscriptRecord): one record per model-call attempt, rendered as
// llm_transcript.log in the run bundle. Fields that belong to the skill runtime (skills, disclosure, decisions)
// are filled by that agent kind; the tool-loop agent leaves them empty.
import type { SkillTranscriptFields } from "../contracts/runtime.ts";

export interface LlmTranscriptRecord {
  turn_index: number;
  attempt: number;
  call_site: string;
  provider: string;
  model: string;
  status: "success" | "request_failed" | "decode_failed";
  /** The prompt is not copied here: seed 002's prompt_text is the request artifact this names. */
  request_artifact: string;
  response_text: string | null;
  prompt_estimated_tokens: number;
  usage: { input_tokens: number | null; output_tokens: number | null; latency_ms: number | null };
  request_id: string | null;
  stop_reason: string | null;
  error: string | null;
  retryable: boolean | null;
  /** The web searches Anthropic ran inside the call: query, results (url, title) or error code. Absent when none. */
  web_searches?: {
    id: string;
    query: string;
    results: { url: string; title: string; page_age: string | null }[];
    error_code: string | null;
  }[];
  /** The search results the answer's text cites. Absent when none. */
  citations?: { url: string; title: string | null; cited_text: string }[];
  /** Seed 002's skill-runtime fields, set by the skill agent's decision loop (absent for the tool loop). */
  skill?: SkillTranscriptFields;
}

export class Transcript {
  private readonly sql: SqlStorage;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  append(record: LlmTranscriptRecord): void {
    this.sql.exec("INSERT INTO bundle_transcript (record) VALUES (?)", JSON.stringify(record));
  }

  /**
   * A line between the calls that says what happened there, not a call: where the conversation was compacted. The
   * rendered transcript shows it in its place; records() leaves it out.
   */
  mark(text: string): void {
    this.sql.exec("INSERT INTO bundle_transcript (record) VALUES (?)", JSON.stringify({ mark: text }));
  }

  /**
   * Adds the skill runtime's fields to the newest record of a call (turn and call site); a decision that did not
   * decode makes its status decode_failed. Idempotent.
   */
  annotate(turnIndex: number, callSite: string, fields: SkillTranscriptFields): void {
    const row = this.sql
      .exec<{ id: number; record: string }>("SELECT id, record FROM bundle_transcript ORDER BY id DESC")
      .toArray()
      .find((r) => {
        const record = JSON.parse(r.record) as LlmTranscriptRecord;
        return record.turn_index === turnIndex && record.call_site === callSite && record.status !== "request_failed";
      });
    if (!row) return;
    const record = JSON.parse(row.record) as LlmTranscriptRecord;
    const updated: LlmTranscriptRecord = {
      ...record,
      skill: fields,
      status: fields.decode_success ? record.status : "decode_failed",
    };
    this.sql.exec("UPDATE bundle_transcript SET record = ? WHERE id = ?", JSON.stringify(updated), row.id);
  }

  records(): LlmTranscriptRecord[] {
    return this.entries().filter((r): r is LlmTranscriptRecord => !("mark" in r));
  }

  private entries(): (LlmTranscriptRecord | { mark: string })[] {
    return this.sql
      .exec<{ record: string }>("SELECT record FROM bundle_transcript ORDER BY id")
      .toArray()
      .map((r) => JSON.parse(r.record) as LlmTranscriptRecord | { mark: string });
  }

  /** Human-readable: a header line per attempt, then the record as JSON, then the response text; marks in place. */
  render(): string {
    return this.entries()
      .map((r) => {
        if ("mark" in r) return `### ${r.mark}\n`;
        const header =
          `=== ${r.call_site} turn ${r.turn_index} attempt ${r.attempt} · ${r.provider}/${r.model} · ${r.status}` +
          (r.usage.latency_ms === null ? "" : ` · ${r.usage.latency_ms} ms`);
        const { response_text, ...meta } = r;
        return `${header}\n${JSON.stringify(meta)}\n--- response ---\n${response_text ?? r.error ?? ""}\n`;
      })
      .join("\n");
  }
}

/** Rough token estimate (4 characters a token) used where the provider has not counted yet. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}
