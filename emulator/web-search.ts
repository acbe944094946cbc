// Anthropic's server-side web search as the emulator plays it: a scripted `web_search` block becomes the two blocks
// the API puts in a reply (server_tool_use with the query, web_search_tool_result with the pages or an error), cited
// text carries web_search_result_location citations, and the reply's usage counts the searches. The tool must be
// offered (`{type: "web_search_20250305", name: "web_search"}` in `tools`), its max_uses is honoured, and the opaque
// fields the API issues (encrypted_content, encrypted_index) are derived from the page so that a request sending a
// result or citation back altered is refused, as the API refuses it.
import { createHash } from "node:crypto";
import type { ReplyBlock } from "./reply.ts";
import { isRecord, type RequestMessage } from "./request.ts";

export const WEB_SEARCH_TOOL_TYPE = "web_search_20250305";

/** The API's error codes for a search (the SDK's WebSearchToolResultErrorCode). */
export const WEB_SEARCH_ERROR_CODES: ReadonlySet<string> = new Set([
  "invalid_tool_input",
  "unavailable",
  "max_uses_exceeded",
  "too_many_requests",
  "query_too_long",
  "request_too_large",
]);

export interface ScriptedResult {
  url: string;
  title: string;
  page_age?: string;
}

export interface ScriptedCitation {
  url: string;
  title?: string;
  cited_text: string;
}

function digest(...parts: string[]): string {
  return createHash("sha256").update(parts.join("\u0000")).digest("base64url").slice(0, 32);
}

/** The opaque encrypted_content the emulator issues for a page: a function of the page, checked when it comes back. */
export function encryptedContent(url: string, title: string): string {
  return `enc_emu_${digest("content", url, title)}`;
}

/** The opaque encrypted_index of a citation, likewise. */
export function encryptedIndex(url: string, citedText: string): string {
  return `idx_emu_${digest("index", url, citedText)}`;
}

/** The web search tool a request offers, or null. */
export function offeredWebSearch(tools: readonly Record<string, unknown>[]): Record<string, unknown> | null {
  return tools.find((tool) => tool.type === WEB_SEARCH_TOOL_TYPE) ?? null;
}

/** The API's refusals of a web search tool definition, worded like its errors; null when it is valid. */
export function checkWebSearchTool(tool: Record<string, unknown>, where: string): string | null {
  if (tool.name !== "web_search") return `${where}.name: Input should be 'web_search'`;
  const maxUses = tool.max_uses;
  if (maxUses !== undefined && maxUses !== null && (!Number.isInteger(maxUses) || (maxUses as number) < 1)) {
    return `${where}.max_uses: Input should be greater than 0`;
  }
  for (const key of ["allowed_domains", "blocked_domains"]) {
    const value = tool[key];
    if (
      value !== undefined &&
      value !== null &&
      (!Array.isArray(value) || !value.every((d) => typeof d === "string"))
    ) {
      return `${where}.${key}: Input should be a valid list of strings`;
    }
  }
  if (Array.isArray(tool.allowed_domains) && Array.isArray(tool.blocked_domains)) {
    return `${where}: cannot specify both allowed_domains and blocked_domains`;
  }
  return null;
}

/**
 * The reply blocks of one scripted search: the model's server_tool_use (its input streamed like a tool call's) and
 * the result the API adds. A search past the tool's max_uses gets max_uses_exceeded instead of its results.
 */
export function searchBlocks(
  block: { query: string; results?: ScriptedResult[]; error_code?: string; id?: string },
  id: string,
  overMaxUses: boolean,
): ReplyBlock[] {
  const errorCode = overMaxUses ? "max_uses_exceeded" : block.error_code;
  const content =
    errorCode !== undefined
      ? { type: "web_search_tool_result_error" as const, error_code: errorCode }
      : (block.results ?? []).map((result) => ({
          type: "web_search_result" as const,
          title: result.title,
          url: result.url,
          encrypted_content: encryptedContent(result.url, result.title),
          page_age: result.page_age ?? null,
        }));
  const toolId = block.id ?? id;
  return [
    { type: "server_tool_use", id: toolId, name: "web_search", input: { query: block.query }, caller: DIRECT },
    { type: "web_search_tool_result", tool_use_id: toolId, content, caller: DIRECT },
  ];
}

/** The caller the API names on a search the model made itself. */
const DIRECT = { type: "direct" } as const;

/** A scripted citation as the API sends it (web_search_result_location). */
export function citationOf(citation: ScriptedCitation): Record<string, unknown> {
  return {
    type: "web_search_result_location",
    cited_text: citation.cited_text,
    url: citation.url,
    title: citation.title ?? null,
    encrypted_index: encryptedIndex(citation.url, citation.cited_text),
  };
}

/**
 * The API's checks of the web search blocks a request sends back in its assistant messages: each result follows the
 * search it answers, and every encrypted_content and encrypted_index is the one issued. Returns the first problem.
 */
export function checkSentBack(messages: readonly RequestMessage[]): string | null {
  for (const [m, message] of messages.entries()) {
    if (message.role !== "assistant" || typeof message.content === "string") continue;
    const searches = new Set<string>();
    for (const [b, block] of message.content.entries()) {
      const where = `messages.${m}.content.${b}`;
      if (block.type === "server_tool_use") searches.add(String(block.id));
      if (block.type === "web_search_tool_result") {
        if (!searches.has(String(block.tool_use_id))) {
          return `${where}: web_search_tool_result block with tool_use_id ${String(block.tool_use_id)} does not follow a server_tool_use block with that id`;
        }
        const results = Array.isArray(block.content) ? block.content : [];
        for (const [r, result] of results.entries()) {
          if (!isRecord(result)) continue;
          if (result.encrypted_content !== encryptedContent(String(result.url), String(result.title))) {
            return `${where}.content.${r}.encrypted_content: invalid encrypted content`;
          }
        }
      }
      if (block.type === "text" && Array.isArray(block.citations)) {
        for (const [c, citation] of block.citations.entries()) {
          if (!isRecord(citation) || citation.type !== "web_search_result_location") continue;
          if (citation.encrypted_index !== encryptedIndex(String(citation.url), String(citation.cited_text))) {
            return `${where}.citations.${c}.encrypted_index: invalid encrypted index`;
          }
        }
      }
    }
  }
  return null;
}
