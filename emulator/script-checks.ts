// Validation of POST /_emulator/scripts bodies: a script registration is checked here, field by field, and its shapes
// are then trusted by the store that routes requests to it (emulator/script.ts).
import { parseConditions } from "./conditions.ts";
import { isRecord, type Parsed } from "./request.ts";
import type { Script, Turn } from "./script.ts";
import { WEB_SEARCH_ERROR_CODES } from "./web-search.ts";

const FAULT_KINDS = new Set(["http", "stream_error", "malformed", "stall"]);
const USAGE_KEYS = ["input_tokens", "output_tokens", "cache_creation_input_tokens", "cache_read_input_tokens"];

function isNonNegativeNumber(value: unknown): value is number {
  return typeof value === "number" && Number.isFinite(value) && value >= 0;
}

function optionalNumber(record: Record<string, unknown>, key: string, where: string): string | null {
  return record[key] === undefined || isNonNegativeNumber(record[key])
    ? null
    : `${where}.${key}: must be a non-negative number`;
}

function checkBlock(block: unknown, where: string): string | null {
  if (!isRecord(block)) return `${where}: must be an object`;
  switch (block.type) {
    case "text":
      if (typeof block.text !== "string") return `${where}.text: must be a string`;
      if (block.citations === undefined) return null;
      if (!Array.isArray(block.citations) || block.citations.length === 0) {
        return `${where}.citations: must be a non-empty array`;
      }
      for (const [index, citation] of block.citations.entries()) {
        const at = `${where}.citations.${index}`;
        if (!isRecord(citation) || typeof citation.url !== "string" || typeof citation.cited_text !== "string") {
          return `${at}: must be an object with url and cited_text strings`;
        }
        if (citation.title !== undefined && typeof citation.title !== "string") return `${at}.title: must be a string`;
      }
      return null;
    case "web_search":
      return checkSearch(block, where);
    case "tool_use":
      if (typeof block.name !== "string" || block.name === "") return `${where}.name: must be a non-empty string`;
      if (!isRecord(block.input)) return `${where}.input: must be an object`;
      return block.id === undefined || typeof block.id === "string" ? null : `${where}.id: must be a string`;
    case "thinking":
      if (typeof block.thinking !== "string") return `${where}.thinking: must be a string`;
      return block.signature === undefined || typeof block.signature === "string"
        ? null
        : `${where}.signature: must be a string`;
    default:
      return `${where}.type: must be "text", "tool_use", "thinking" or "web_search"`;
  }
}

function checkSearch(block: Record<string, unknown>, where: string): string | null {
  if (typeof block.query !== "string" || block.query === "") return `${where}.query: must be a non-empty string`;
  if (block.id !== undefined && typeof block.id !== "string") return `${where}.id: must be a string`;
  if (block.error_code !== undefined) {
    if (typeof block.error_code !== "string" || !WEB_SEARCH_ERROR_CODES.has(block.error_code)) {
      return `${where}.error_code: must be one of ${[...WEB_SEARCH_ERROR_CODES].join(", ")}`;
    }
    return block.results === undefined ? null : `${where}: results and error_code exclude each other`;
  }
  if (!Array.isArray(block.results)) return `${where}.results: must be an array (or give error_code)`;
  for (const [index, result] of block.results.entries()) {
    const at = `${where}.results.${index}`;
    if (!isRecord(result) || typeof result.url !== "string" || typeof result.title !== "string") {
      return `${at}: must be an object with url and title strings`;
    }
    if (result.page_age !== undefined && typeof result.page_age !== "string") return `${at}.page_age: must be a string`;
  }
  return null;
}

function checkFault(fault: unknown, where: string): string | null {
  if (!isRecord(fault) || typeof fault.kind !== "string" || !FAULT_KINDS.has(fault.kind)) {
    return `${where}.kind: must be one of http, stream_error, malformed, stall`;
  }
  if (
    fault.kind === "http" &&
    (typeof fault.status !== "number" || !Number.isInteger(fault.status) || fault.status < 400 || fault.status > 599)
  ) {
    return `${where}.status: must be an HTTP error status (400-599)`;
  }
  for (const key of ["after_deltas", "ms", "retry_after"]) {
    const problem = optionalNumber(fault, key, where);
    if (problem) return problem;
  }
  return null;
}

function checkTurn(turn: unknown, where: string): string | null {
  if (!isRecord(turn)) return `${where}: must be an object`;
  if (!Array.isArray(turn.content)) return `${where}.content: must be an array of blocks`;
  for (const [index, block] of turn.content.entries()) {
    const problem = checkBlock(block, `${where}.content.${index}`);
    if (problem) return problem;
  }
  if (turn.stop_reason !== undefined && typeof turn.stop_reason !== "string")
    return `${where}.stop_reason: must be a string`;
  if (turn.stop_sequence !== undefined && typeof turn.stop_sequence !== "string")
    return `${where}.stop_sequence: must be a string`;
  if (turn.usage !== undefined) {
    if (!isRecord(turn.usage)) return `${where}.usage: must be an object`;
    for (const key of USAGE_KEYS) {
      const problem = optionalNumber(turn.usage, key, `${where}.usage`);
      if (problem) return problem;
    }
  }
  if (turn.faults !== undefined) {
    if (!Array.isArray(turn.faults)) return `${where}.faults: must be an array`;
    for (const [index, fault] of turn.faults.entries()) {
      const problem = checkFault(fault, `${where}.faults.${index}`);
      if (problem) return problem;
    }
  }
  return optionalNumber(turn, "ttft_ms", where) ?? optionalNumber(turn, "token_delay_ms", where);
}

/** Validates a script registration; the shapes are then trusted, so this is the only gate. */
export function parseScript(body: unknown): Parsed<Omit<Script, "id">> {
  if (!isRecord(body)) return { ok: false, message: "script must be a JSON object" };
  if (typeof body.match !== "string" || body.match === "")
    return { ok: false, message: "match: must be a non-empty string" };
  if (!Array.isArray(body.turns)) return { ok: false, message: "turns: must be an array" };
  for (const [index, turn] of body.turns.entries()) {
    const problem = checkTurn(turn, `turns.${index}`);
    if (problem) return { ok: false, message: problem };
  }
  const numbers = ["ttft_ms", "token_delay_ms", "min_cacheable_tokens", "prefill_ms_per_1k_tokens"] as const;
  for (const key of numbers) {
    const problem = optionalNumber(body, key, "script");
    if (problem) return { ok: false, message: problem };
  }
  for (const key of ["prompt_cache", "compaction_fails"] as const) {
    if (body[key] !== undefined && typeof body[key] !== "boolean") {
      return { ok: false, message: `script.${key}: must be a boolean (true or false)` };
    }
  }
  const conditions = parseConditions(body);
  if (!conditions.ok) return conditions;
  const script: Omit<Script, "id"> = { match: body.match, turns: body.turns as Turn[], ...conditions.value };
  for (const key of numbers) {
    const value = body[key];
    if (typeof value === "number") script[key] = value;
  }
  if (typeof body.prompt_cache === "boolean") script.prompt_cache = body.prompt_cache;
  if (body.compaction_fails === true) script.compaction_fails = true;
  return { ok: true, value: script };
}
