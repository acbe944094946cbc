// WebFetch (seed 000 built-in): fetches a URL for the agent, as text. The outbound guard refuses private, loopback
// and link-local targets (redirects included) unless configuration allows them; the agent's webFetch settings
// bound the size and the time. HTML is reduced to its readable text with Workers' streaming HTMLRewriter.
import { z } from "zod";
import { BlockedUrlError } from "../errors.ts";
import { FetchTimeoutError, guardedFetch } from "../net/guarded-fetch.ts";
import { defineTool } from "./define-tool.ts";
import { MAX_RESULT_CHARS } from "./result-cap.ts";
import { type BuiltinTool, toolError } from "./tool.ts";

export const webFetchTool: BuiltinTool = defineTool({
  name: "WebFetch",
  description:
    "Fetch a web page or file over http(s) and return it as text (HTML is reduced to readable text with links). " +
    "Private and local network addresses are refused.",
  input: z.strictObject({ url: z.string().min(1).max(4096).describe("An absolute http(s) URL.") }),
  example: '{"url": "https://…"}',
  readOnly: true,
  async run({ url }, ctx) {
    const limits = ctx.settings.webFetch;
    let response: Awaited<ReturnType<typeof guardedFetch>>;
    try {
      response = await guardedFetch(url, {
        policy: ctx.outbound,
        maxBytes: limits.max_bytes,
        timeoutMs: limits.timeout_seconds * 1000,
        signal: ctx.signal,
      });
    } catch (error) {
      if (ctx.signal.aborted) throw error;
      if (error instanceof BlockedUrlError || error instanceof FetchTimeoutError) return toolError(error.message);
      return toolError(`Fetching ${url} failed: ${error instanceof Error ? error.message : String(error)}`);
    }
    const type = response.headers["content-type"] ?? "";
    const raw = new TextDecoder().decode(response.body);
    const text = /html/i.test(type) ? await htmlToText(raw) : raw;
    const notes = [
      `URL: ${response.url}`,
      `Status: ${response.status} ${response.statusText}`.trimEnd(),
      `Content-Type: ${type || "unknown"}`,
      ...(response.truncated ? [`The body was cut at ${limits.max_bytes} bytes (webFetch.max_bytes).`] : []),
    ];
    const body = text.length > MAX_RESULT_CHARS ? `${text.slice(0, MAX_RESULT_CHARS)}\n… [cut]` : text;
    return {
      content: `${notes.join("\n")}\n\n${body}`,
      is_error: response.status >= 400,
      details: {
        url: response.url,
        status: response.status,
        bytes: response.body.byteLength,
        truncated: response.truncated,
      },
    };
  },
});

/** Elements that start a paragraph (a blank line before them) or a line of their own. */
const PARAGRAPH = new Set([
  "p",
  "h1",
  "h2",
  "h3",
  "h4",
  "h5",
  "h6",
  "pre",
  "blockquote",
  "table",
  "ul",
  "ol",
  "dl",
  "figure",
  "hr",
]);
const LINE = new Set(["div", "section", "article", "header", "footer", "main", "nav", "li", "tr", "br", "dt", "dd"]);

/** Elements whose content is not text for a reader. */
const SKIPPED = "script, style, noscript, template, svg, math, title, iframe, object";

/**
 * Readable text of an HTML document: no scripts, styles or other non-text content, paragraphs separated by a
 * blank line, links as [text](href), whitespace collapsed except inside <pre>, entities decoded.
 */
export async function htmlToText(html: string): Promise<string> {
  const parts: { text: string; pre: boolean }[] = [];
  const push = (text: string, pre = false) => {
    const last = parts.at(-1);
    if (last && last.pre === pre) last.text += text;
    else parts.push({ text, pre });
  };
  let skip = 0;
  let pre = 0;
  /** Runs `fn` at the element's end tag; false for an element that has none (void or self-closing). */
  const atEnd = (element: Element, fn: () => void): boolean => {
    try {
      element.onEndTag(fn);
      return true;
    } catch {
      return false;
    }
  };
  const rewriter = new HTMLRewriter()
    .on(SKIPPED, {
      element(element) {
        if (atEnd(element, () => skip--)) skip++;
      },
    })
    .on("*", {
      element(element) {
        if (skip > 0) return;
        const tag = element.tagName.toLowerCase();
        if (PARAGRAPH.has(tag)) push("\n\n");
        else if (LINE.has(tag)) push("\n");
        if (tag === "pre" && atEnd(element, () => pre--)) pre++;
        if (/^h[1-6]$/.test(tag)) push(`${"#".repeat(Number(tag[1]))} `);
        if (tag === "li") push("- ");
        if (tag === "a") {
          const href = element.getAttribute("href")?.trim();
          if (href && !href.startsWith("#") && !/^javascript:/i.test(href)) {
            if (atEnd(element, () => push(`](${href})`))) push("[");
          }
        }
      },
    })
    .onDocument({
      text(chunk) {
        if (skip === 0 && chunk.text) push(pre > 0 ? chunk.text : chunk.text.replace(/\s+/g, " "), pre > 0);
      },
    });
  await rewriter.transform(new Response(html)).text();
  // Entities are decoded on joined runs of text, so one split across text chunks is still decoded.
  const text = parts
    .map((part) =>
      part.pre
        ? decodeEntities(part.text)
        : decodeEntities(part.text)
            .replace(/[^\S\n]+/g, " ")
            .replace(/ ?\n ?/g, "\n"),
    )
    .join("");
  return text.replace(/\n{3,}/g, "\n\n").trim();
}

const NAMED: Readonly<Record<string, string>> = {
  amp: "&",
  lt: "<",
  gt: ">",
  quot: '"',
  apos: "'",
  nbsp: " ",
  mdash: "—",
  ndash: "–",
  hellip: "…",
  copy: "©",
  reg: "®",
  trade: "™",
  lsquo: "‘",
  rsquo: "’",
  ldquo: "“",
  rdquo: "”",
  laquo: "«",
  raquo: "»",
  middot: "·",
  bull: "•",
  euro: "€",
  pound: "£",
  deg: "°",
  times: "×",
};

function codePoint(value: number, original: string): string {
  if (!Number.isInteger(value) || value > 0x10ffff) return original;
  // NUL and lone surrogates are what browsers show as U+FFFD; a lone surrogate would also break the JSON sent on.
  if (value === 0 || (value >= 0xd800 && value <= 0xdfff)) return "\ufffd";
  return String.fromCodePoint(value);
}

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (match, body: string) => {
    if (body[0] === "#") {
      const hex = body[1] === "x" || body[1] === "X";
      return codePoint(Number.parseInt(body.slice(hex ? 2 : 1), hex ? 16 : 10), match);
    }
    return NAMED[body.toLowerCase()] ?? match;
  });
}
