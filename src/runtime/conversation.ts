// The conversation of a task as the API shows it (GET /v1/tasks/:id/messages). Messages are written by index, so a
// replayed run rewrites nothing twice. A message is the Messages API's (the content blocks Outpost's agents write,
// whichever provider answered); its schema is a wire type, built on first use (z.lazy) like every wire schema.
import type { MessageParam } from "@anthropic-ai/sdk/resources/messages";
import { z } from "zod";
import { JsonSchema } from "../lib/json.ts";

const TextBlock = () => z.strictObject({ type: z.literal("text"), text: z.string() });

/** A web search result the answer's text cites; encrypted_index is the API's, sent back as it came. */
const WebCitation = () =>
  z.strictObject({
    type: z.literal("web_search_result_location"),
    url: z.string(),
    title: z.string().nullable(),
    cited_text: z.string(),
    encrypted_index: z.string(),
  });

/** Who made a server tool's call, as the API says: the model itself ({type: "direct"}), or its code execution. */
const Caller = () =>
  z.union([
    z.strictObject({ type: z.literal("direct") }),
    z.strictObject({ type: z.enum(["code_execution_20250825", "code_execution_20260120"]), tool_id: z.string() }),
  ]);

/** The web search errors the API answers with (the SDK's WebSearchToolResultErrorCode). */
const WEB_SEARCH_ERROR_CODES = [
  "invalid_tool_input",
  "unavailable",
  "max_uses_exceeded",
  "too_many_requests",
  "query_too_long",
  "request_too_large",
] as const;

const ImageBlock = () =>
  z.strictObject({
    type: z.literal("image"),
    source: z.discriminatedUnion("type", [
      z.strictObject({
        type: z.literal("base64"),
        media_type: z.enum(["image/jpeg", "image/png", "image/gif", "image/webp"]),
        data: z.string(),
      }),
      z.strictObject({ type: z.literal("url"), url: z.string() }),
    ]),
  });

/** A block of a message's content. */
export const ContentBlockSchema = z.lazy(() =>
  z.discriminatedUnion("type", [
    /** Text; an answer's text may cite web search results. */
    TextBlock().extend({ citations: z.array(WebCitation()).exactOptional() }),
    ImageBlock(),
    /** A tool call the model asked for. */
    z.strictObject({ type: z.literal("tool_use"), id: z.string(), name: z.string(), input: JsonSchema }),
    /** What the call returned: text, or text and images (an MCP tool's). */
    z.strictObject({
      type: z.literal("tool_result"),
      tool_use_id: z.string(),
      content: z.union([z.string(), z.array(z.discriminatedUnion("type", [TextBlock(), ImageBlock()]))]),
      is_error: z.boolean(),
    }),
    z.strictObject({ type: z.literal("thinking"), thinking: z.string(), signature: z.string() }),
    z.strictObject({ type: z.literal("redacted_thinking"), data: z.string() }),
    /** A call of a tool the provider runs itself (Anthropic's web search: input {query}). */
    z.strictObject({
      type: z.literal("server_tool_use"),
      id: z.string(),
      name: z.literal("web_search"),
      input: JsonSchema,
      caller: Caller().exactOptional(),
    }),
    /** What a web search found (encrypted_content is the API's, sent back as it came), or its error. */
    z.strictObject({
      type: z.literal("web_search_tool_result"),
      tool_use_id: z.string(),
      content: z.union([
        z.array(
          z.strictObject({
            type: z.literal("web_search_result"),
            url: z.string(),
            title: z.string(),
            encrypted_content: z.string(),
            page_age: z.string().nullable().exactOptional(),
          }),
        ),
        z.strictObject({ type: z.literal("web_search_tool_result_error"), error_code: z.enum(WEB_SEARCH_ERROR_CODES) }),
      ]),
      caller: Caller().exactOptional(),
    }),
  ]),
);
export type ContentBlock = z.infer<typeof ContentBlockSchema>;

/** A message's content: text, or blocks. */
export const MessageContentSchema = z.lazy(() => z.union([z.string(), z.array(ContentBlockSchema)]));
export type MessageContent = z.infer<typeof MessageContentSchema>;

/** A message of the conversation, as GET /v1/tasks/:id/messages lists it. */
export const StoredMessageSchema = z.lazy(() =>
  z.strictObject({
    /** Its place in the conversation, from 0. */
    index: z.number().int().nonnegative(),
    role: z.enum(["user", "assistant"]),
    content: MessageContentSchema,
    created_at: z.iso.datetime(),
  }),
);
export type StoredMessage = z.infer<typeof StoredMessageSchema>;

export class MessageLog {
  private readonly sql: SqlStorage;
  /**
   * The conversation as the model's context, once read: a session's next turn continues from it without reading the
   * whole history again. Kept in step by record(); dropped after a rolled-back transaction.
   */
  private context: MessageParam[] | undefined;
  /** How many messages the table holds, once counted. */
  private known: number | undefined;

  constructor(sql: SqlStorage) {
    this.sql = sql;
  }

  record(index: number, message: MessageParam): void {
    this.sql.exec(
      "INSERT OR IGNORE INTO runtime_messages (idx, role, content, created_at) VALUES (?, ?, ?, ?)",
      index,
      message.role,
      JSON.stringify(message.content),
      new Date().toISOString(),
    );
    // After the write: the caches never hold a message the table does not.
    if (this.context !== undefined) {
      if (index === this.context.length) this.context.push(message);
      else if (index > this.context.length) this.context = undefined;
    }
    if (this.known !== undefined) {
      if (index === this.known) this.known++;
      else if (index > this.known) this.known = undefined;
    }
  }

  /** Forgets the cached context and count (after a rolled-back transaction). */
  invalidate(): void {
    this.context = undefined;
    this.known = undefined;
  }

  /** The table was just created, empty, by this instance (a new task's object): nothing need be read back. */
  knownEmpty(): void {
    this.context = [];
    this.known = 0;
  }

  /** The conversation as the model's context (a copy the caller may extend), read from storage only the first time. */
  contextMessages(): MessageParam[] {
    this.context ??= this.list().map(
      (m): MessageParam => ({ role: m.role, content: m.content as MessageParam["content"] }),
    );
    return [...this.context];
  }

  /** The index the next message takes. */
  nextIndex(): number {
    return this.sql.exec<{ n: number }>("SELECT COALESCE(MAX(idx), -1) + 1 AS n FROM runtime_messages").one().n;
  }

  /** The last message, if any. */
  last(): StoredMessage | null {
    return this.rows("SELECT * FROM runtime_messages ORDER BY idx DESC LIMIT 1")[0] ?? null;
  }

  /** The messages from `index` on (a turn's). */
  from(index: number): StoredMessage[] {
    return this.rows("SELECT * FROM runtime_messages WHERE idx >= ? ORDER BY idx", index);
  }

  /**
   * How many messages the conversation holds (they are recorded by index, without gaps): counted once, then kept in
   * step by record(), the table's only writer (a checkpoint asks at every step).
   */
  count(): number {
    this.known ??= this.sql.exec<{ n: number }>("SELECT COUNT(*) AS n FROM runtime_messages").one().n;
    return this.known;
  }

  list(): StoredMessage[] {
    return this.rows("SELECT * FROM runtime_messages ORDER BY idx");
  }

  private rows(query: string, ...bindings: SqlStorageValue[]): StoredMessage[] {
    return this.sql
      .exec<{ idx: number; role: string; content: string; created_at: string }>(query, ...bindings)
      .toArray()
      .map((row) => ({
        index: row.idx,
        role: row.role === "assistant" ? "assistant" : "user",
        // What record() stored: a message the run built, as the Messages API types it.
        content: JSON.parse(row.content) as MessageContent,
        created_at: row.created_at,
      }));
  }
}
