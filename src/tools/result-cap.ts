// What a tool result may hold in the conversation: at most MAX_RESULT_CHARS of text for the model (the full text is
// in the run bundle, and the cut says where), and no image too large for the conversation's storage rows.
import type { ToolResult, ToolResultBlock } from "../contracts/tool-result.ts";

/** The most text one result sends back to the model. */
export const MAX_RESULT_CHARS = 30_000;

/** Images larger than this (base64 characters) are not kept in the conversation, whose rows must stay small. */
const MAX_IMAGE_CHARS = 1024 * 1024;

/** A result within MAX_RESULT_CHARS of text for the model; `artifact` names the full text in the bundle. */
export function capResult(result: ToolResult, artifact: string | null): ToolResult {
  const note = `\n… [cut at ${MAX_RESULT_CHARS} characters; the full result is ${artifact} in the run bundle]`;
  if (typeof result.content === "string") {
    return result.content.length <= MAX_RESULT_CHARS
      ? result
      : { ...result, content: result.content.slice(0, MAX_RESULT_CHARS) + note };
  }
  let budget = MAX_RESULT_CHARS;
  let cut = false;
  const blocks = result.content.flatMap((block): ToolResultBlock[] => {
    if (block.type === "image" && block.source.type === "base64" && block.source.data.length > MAX_IMAGE_CHARS) {
      cut = true;
      const bytes = Math.floor((block.source.data.length * 3) / 4);
      return [
        { type: "text", text: `[an image of about ${bytes} bytes was left out: images over 768 KiB are not kept]` },
      ];
    }
    if (block.type !== "text") return [block];
    if (block.text.length <= budget) {
      budget -= block.text.length;
      return [block];
    }
    // The first text over the budget is cut and says so; later ones are left out (the API refuses empty text).
    const text = cut ? "" : block.text.slice(0, budget) + note;
    cut = true;
    budget = 0;
    return text ? [{ ...block, text }] : [];
  });
  return cut ? { ...result, content: blocks } : result;
}

/** Text within MAX_RESULT_CHARS, its cut saying how long it was (for results whose whole text is kept nowhere). */
export function clipText(text: string): string {
  return text.length <= MAX_RESULT_CHARS
    ? text
    : `${text.slice(0, MAX_RESULT_CHARS)}\n… [cut at ${MAX_RESULT_CHARS} characters of ${text.length}]`;
}
