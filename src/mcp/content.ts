// An MCP CallToolResult as a tool_result for the model (seed 002 McpCallResult: content, is_error, raw_text).
// Text and images pass through; other content becomes a line of text saying what it was, so nothing the server
// sent is silently dropped; structuredContent is sent as JSON when the server gave no text for it.
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ToolResult, ToolResultBlock } from "../contracts/tool-result.ts";

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

export interface McpCallResult {
  server_name: string;
  tool_name: string;
  content: CallToolResult["content"];
  is_error: boolean;
  raw_text: string;
}

export function toMcpCallResult(server: string, tool: string, result: CallToolResult): McpCallResult {
  const blocks = toBlocks(result);
  return {
    server_name: server,
    tool_name: tool,
    content: result.content,
    is_error: result.isError === true,
    raw_text: blocks.map((b) => (b.type === "text" ? b.text : "[image]")).join("\n"),
  };
}

export function toToolResult(result: CallToolResult): ToolResult {
  const blocks = toBlocks(result);
  const onlyText = blocks.every((b) => b.type === "text");
  return {
    content: onlyText ? blocks.map((b) => (b.type === "text" ? b.text : "")).join("\n") : blocks,
    is_error: result.isError === true,
  };
}

function toBlocks(result: CallToolResult): ToolResultBlock[] {
  const blocks: ToolResultBlock[] = [];
  for (const item of result.content ?? []) {
    switch (item.type) {
      case "text":
        blocks.push({ type: "text", text: item.text });
        break;
      case "image":
        if (IMAGE_TYPES.has(item.mimeType)) {
          blocks.push({
            type: "image",
            source: { type: "base64", media_type: item.mimeType as "image/png", data: item.data },
          });
        } else {
          blocks.push({
            type: "text",
            text: `[image of type ${item.mimeType} omitted: the model accepts png, jpeg, gif, webp]`,
          });
        }
        break;
      case "audio":
        blocks.push({ type: "text", text: `[audio of type ${item.mimeType} omitted]` });
        break;
      case "resource_link":
        blocks.push({ type: "text", text: `Resource link: ${item.uri}${item.name ? ` (${item.name})` : ""}` });
        break;
      case "resource": {
        const resource = item.resource;
        blocks.push({
          type: "text",
          text:
            "text" in resource && typeof resource.text === "string"
              ? `Resource ${resource.uri}:\n${resource.text}`
              : `[binary resource ${resource.uri} omitted]`,
        });
        break;
      }
      default:
        blocks.push({ type: "text", text: `[content of type ${(item as { type: string }).type} omitted]` });
    }
  }
  if (blocks.length === 0 && result.structuredContent !== undefined) {
    blocks.push({ type: "text", text: JSON.stringify(result.structuredContent) });
  }
  if (blocks.length === 0)
    blocks.push({ type: "text", text: result.isError ? "The tool failed without a message." : "(no output)" });
  return blocks;
}
