// Anthropic's server-side web search (seed 004 ClaudeConfig.web_search): the agent setting that turns it on, the
// server tool it puts in a request's `tools`, and what a reply's blocks say about the searches. The API runs the
// searches inside the model call: the reply carries a server_tool_use block (the query) and a web_search_tool_result
// block (the results, or an error) per search, and text blocks cite the results. Outpost runs nothing: it keeps these
// blocks unchanged in the conversation (the results' encrypted_content must go back as it came) and reports them.
import type {
  ContentBlock,
  ContentBlockParam,
  UserLocation,
  WebSearchTool20250305,
} from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";

/** The server tool's version, and its name in the request and in server_tool_use blocks. */
export const WEB_SEARCH_TOOL_TYPE = "web_search_20250305";
export const WEB_SEARCH_TOOL_NAME = "web_search";

const domains = z
  .array(z.string().trim().min(1, "must not be empty").max(253), "must be a list of domains")
  .min(1, "must list at least one domain")
  .max(100);

/**
 * The setting: `true` (seed 004's form), or an object with the server tool's own limits. An object turns search on
 * unless it says `enabled: false`.
 */
export const WebSearchSettingSchema = z.union(
  [
    z.boolean(),
    z.strictObject({
      enabled: z.boolean("must be true or false").default(true),
      /** Searches allowed within one model call (the API answers max_uses_exceeded past it). */
      max_uses: z.number("must be a positive integer").int("must be a positive integer").positive().optional(),
      /** Only these domains appear in results (not with blocked_domains). */
      allowed_domains: domains.optional(),
      /** These domains never appear in results (not with allowed_domains). */
      blocked_domains: domains.optional(),
      /** Where the user is, for more relevant results. */
      user_location: z
        .strictObject({
          type: z.literal("approximate").default("approximate"),
          city: z.string().min(1).max(255).optional(),
          region: z.string().min(1).max(255).optional(),
          country: z
            .string()
            .regex(/^[A-Z]{2}$/, "must be a two-letter ISO country code")
            .optional(),
          timezone: z.string().min(1).max(255).optional(),
        })
        .optional(),
    }),
  ],
  "must be true, false or an object of web search settings",
);
export type WebSearchSetting = z.input<typeof WebSearchSettingSchema>;

/** The server tool a request offers for a setting, or null when the setting leaves search off. */
export function webSearchTool(
  setting: z.output<typeof WebSearchSettingSchema> | undefined,
): WebSearchTool20250305 | null {
  if (setting === undefined || setting === false) return null;
  if (setting === true) return { type: WEB_SEARCH_TOOL_TYPE, name: WEB_SEARCH_TOOL_NAME };
  if (!setting.enabled) return null;
  return {
    type: WEB_SEARCH_TOOL_TYPE,
    name: WEB_SEARCH_TOOL_NAME,
    ...(setting.max_uses === undefined ? {} : { max_uses: setting.max_uses }),
    ...(setting.allowed_domains === undefined ? {} : { allowed_domains: [...setting.allowed_domains] }),
    ...(setting.blocked_domains === undefined ? {} : { blocked_domains: [...setting.blocked_domains] }),
    ...(setting.user_location === undefined
      ? {}
      : {
          user_location: Object.fromEntries(
            Object.entries(setting.user_location).filter(([, value]) => value !== undefined),
          ) as unknown as UserLocation,
        }),
  };
}

/** One search the model made in a reply: its query, and the results or the error the API answered with. */
export interface WebSearchCall {
  /** The server_tool_use id (srvtoolu_…), which its result block names. */
  id: string;
  query: string;
  /** The pages found (empty on an error). */
  results: { url: string; title: string; page_age: string | null }[];
  /** The API's error_code (max_uses_exceeded, too_many_requests, …), or null. */
  error_code: string | null;
}

/** A citation of a search result on the answer's text. */
export interface WebCitation {
  url: string;
  title: string | null;
  cited_text: string;
}

type Block = ContentBlock | ContentBlockParam;

/** The query of a web search server_tool_use block's input. */
export function queryOf(input: unknown): string {
  const query = typeof input === "object" && input !== null ? (input as { query?: unknown }).query : undefined;
  return typeof query === "string" ? query : "";
}

/** The result of one web_search_tool_result block's content: its pages, or its error code. */
export function searchOutcome(content: unknown): Pick<WebSearchCall, "results" | "error_code"> {
  if (Array.isArray(content)) {
    const results = content
      .filter(
        (r): r is Record<string, unknown> => typeof r === "object" && r !== null && r.type === "web_search_result",
      )
      .map((r) => ({
        url: String(r.url ?? ""),
        title: String(r.title ?? ""),
        page_age: typeof r.page_age === "string" ? r.page_age : null,
      }));
    return { results, error_code: null };
  }
  const code =
    typeof content === "object" && content !== null ? (content as { error_code?: unknown }).error_code : null;
  return { results: [], error_code: typeof code === "string" ? code : "unknown" };
}

/** The web searches of a message's content, in order; a search whose result has not come is left out. */
export function webSearchCalls(content: readonly Block[]): WebSearchCall[] {
  const queries = new Map<string, string>();
  const calls: WebSearchCall[] = [];
  for (const block of content) {
    if (block.type === "server_tool_use" && block.name === WEB_SEARCH_TOOL_NAME) {
      queries.set(block.id, queryOf(block.input));
    } else if (block.type === "web_search_tool_result") {
      calls.push({
        id: block.tool_use_id,
        query: queries.get(block.tool_use_id) ?? "",
        ...searchOutcome(block.content),
      });
    }
  }
  return calls;
}

/** The web search citations on a message's text blocks, in order. */
export function webCitations(content: readonly Block[]): WebCitation[] {
  const out: WebCitation[] = [];
  for (const block of content) {
    if (block.type !== "text" || !block.citations) continue;
    for (const citation of block.citations) {
      if (citation.type === "web_search_result_location") {
        out.push({ url: citation.url, title: citation.title, cited_text: citation.cited_text });
      }
    }
  }
  return out;
}

/** Seed 000's built-in name for web search: how allowedTools names the server tool. */
export const WEB_SEARCH_ALLOWED_NAME = "WebSearch";
