// An error as a failed task stores it and the API sends it (ErrorInfo): the task's `error`, the `error` of run_failed,
// llm_request_failed and mcp_connection_failed events, a callback's. Its code is one of the registry's, and the class
// that raised it may add details (src/errors.ts). A zod schema, so that the event catalog and the task view share
// it; built on first use (z.lazy), since the Worker only needs its type.
import { z } from "zod";
import { JsonSchema } from "../lib/json.ts";
import { ERROR_CODE_NAMES } from "./codes.ts";

export const ErrorInfoSchema = z.lazy(() =>
  z
    .object({
      code: z.enum(ERROR_CODE_NAMES).describe("the registry's code (docs/reference/errors.md)"),
      message: z.string().describe("for people; clients branch on the code"),
      type: z.string().describe("the error's class, e.g. ProviderError"),
      retryable: z.boolean().describe("whether the same operation could succeed later"),
      // The details Outpost's own classes add (src/errors.ts); an agent's own errors may add others (any JSON).
      status: z.number().int().nullable().optional().describe("ProviderError: the provider's HTTP status"),
      request_id: z.string().nullable().optional().describe("ProviderError: the provider's request id"),
      partial_message_count: z.number().int().nonnegative().optional().describe("StreamingError"),
      raw_response: z.string().optional().describe("MalformedResponseError: its first 2,000 characters"),
      tool_name: z.string().optional().describe("InvalidToolError"),
      available_tools: z.array(z.string()).optional().describe("InvalidToolError"),
      url: z.string().optional().describe("BlockedUrlError"),
      server: z.string().optional().describe("McpConnectionError"),
      agent_name: z.string().optional().describe("DuplicateAgentError, AgentNotFoundError"),
      available_agents: z.array(z.string()).optional().describe("AgentNotFoundError"),
    })
    // Optional like the details above, so that the type has one index signature for them all.
    .catchall(JsonSchema.optional()),
);

/** What a stored or transmitted error looks like (errors cross Durable Object RPC as values). */
export type ErrorInfo = z.infer<typeof ErrorInfoSchema>;
