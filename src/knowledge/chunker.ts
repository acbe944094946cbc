// A Markdown-aware chunker for documents uploaded to a collection: each chunk is a run of whole paragraphs of one
// section, at most MAX_CHUNK_CHARS long, and keeps its heading path (["Guide", "Install", "Linux"]), so a search hit
// says where in the document it comes from and the hierarchical tool can return a whole section. Written by hand (no
// well-kept library does this in workerd): ATX headings (`#` to `######`, CommonMark §4.2) open sections; a fenced code
// block (``` or ~~~, §4.5: closed by a fence of the same character, at least as long, with no info string) is one
// block, kept whole and verbatim, and its `#` lines are not headings; a block longer than a chunk is cut (prose at
// sentence ends, then spaces; code between lines), never inside a character (a UTF-16 surrogate pair). A section of a
// few characters ("# a\nb") joins the chunk before it, with its heading line, rather than making a chunk of its own.

/** Longest chunk, in characters (about 300 tokens of English): small enough to be specific, big enough for context. */
export const MAX_CHUNK_CHARS = 1_200;
/** A section whose text is shorter than this joins the chunk before it (when it fits), heading line and all. */
export const MIN_SECTION_CHARS = 16;
/** Characters of a heading kept in a chunk's heading path (a longer heading is cut, with "…"). */
export const MAX_HEADING_CHARS = 200;

export interface Chunk {
  /** Position in the document, from 0. */
  index: number;
  /** The headings above the chunk, outermost first (the document's title, when given, is not one). */
  headingPath: string[];
  text: string;
}

interface Block {
  text: string;
  /** A fenced code block: kept verbatim, cut only between lines. */
  code: boolean;
}

const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** The document's chunks, in order. Empty text gives none. */
export function chunkMarkdown(text: string, maxChars = MAX_CHUNK_CHARS): Chunk[] {
  const chunks: Chunk[] = [];
  const headings: string[] = [];
  let headingLine = "";
  let blocks: Block[] = [];
  const flushSection = () => {
    const pieces = packBlocks(blocks, maxChars);
    blocks = [];
    const last = chunks.at(-1);
    const [only] = pieces;
    if (pieces.length === 1 && only !== undefined && only.length < MIN_SECTION_CHARS && last) {
      const joined = `${last.text}\n\n${headingLine}\n\n${only}`;
      if (joined.length <= maxChars) {
        last.text = joined;
        return;
      }
    }
    for (const piece of pieces) chunks.push({ index: chunks.length, headingPath: [...headings], text: piece });
  };
  let paragraph: string[] = [];
  const endParagraph = () => {
    const block = paragraph.join("\n").trim();
    if (block) blocks.push({ text: block, code: false });
    paragraph = [];
  };
  let fence: { marker: string; lines: string[] } | null = null;
  const endFence = () => {
    if (fence) blocks.push({ text: fence.lines.join("\n"), code: true });
    fence = null;
  };
  for (const line of text.replace(/\r\n?/g, "\n").split("\n")) {
    if (fence !== null) {
      fence.lines.push(line);
      if (closesFence(line, fence.marker)) endFence();
      continue;
    }
    const opening = FENCE.exec(line);
    if (opening?.[1]) {
      endParagraph();
      fence = { marker: opening[1], lines: [line] };
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading?.[1]) {
      endParagraph();
      flushSection();
      const level = heading[1].length;
      headings.length = Math.min(headings.length, level - 1);
      headings.push(shortHeading((heading[2] ?? "").trim()));
      headingLine = line.trim();
      continue;
    }
    if (line.trim() === "") endParagraph();
    else paragraph.push(line);
  }
  // An unclosed fence runs to the end of the document (CommonMark §4.5).
  endFence();
  endParagraph();
  flushSection();
  return chunks;
}

/** Whether `line` closes a fence opened with `marker`: the same character, at least as many, nothing after. */
function closesFence(line: string, marker: string): boolean {
  const close = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line)?.[1];
  return close !== undefined && close[0] === marker[0] && close.length >= marker.length;
}

/** A heading cut to MAX_HEADING_CHARS on a character boundary. */
function shortHeading(heading: string): string {
  return heading.length <= MAX_HEADING_CHARS
    ? heading
    : `${heading.slice(0, boundary(heading, MAX_HEADING_CHARS - 1))}…`;
}

/** Whole blocks packed into chunks of at most `max` characters; a block longer than that is cut first. */
function packBlocks(blocks: readonly Block[], max: number): string[] {
  const out: string[] = [];
  let current = "";
  for (const block of blocks.flatMap((b) => (b.text.length > max ? cutLong(b, max) : [b.text]))) {
    if (current && current.length + 2 + block.length > max) {
      out.push(current);
      current = "";
    }
    current = current ? `${current}\n\n${block}` : block;
  }
  if (current) out.push(current);
  return out;
}

/**
 * A block cut into pieces of at most `max` characters: prose at a sentence end, else a space, else anywhere; code at
 * a line end, else anywhere. "Anywhere" is never between the two halves of a surrogate pair.
 */
function cutLong(block: Block, max: number): string[] {
  const pieces: string[] = [];
  let rest = block.text;
  while (rest.length > max) {
    const window = rest.slice(0, max);
    let at: number;
    if (block.code) {
      const line = window.lastIndexOf("\n");
      at = line > 0 ? line : boundary(rest, max);
    } else {
      const sentence = Math.max(window.lastIndexOf(". "), window.lastIndexOf(".\n"), window.lastIndexOf("? "));
      const space = Math.max(window.lastIndexOf(" "), window.lastIndexOf("\n"));
      at = sentence > max / 2 ? sentence + 1 : space > max / 2 ? space : boundary(rest, max);
    }
    const piece = block.code ? rest.slice(0, at) : rest.slice(0, at).trim();
    if (piece) pieces.push(piece);
    rest = block.code ? rest.slice(at).replace(/^\n/, "") : rest.slice(at).trim();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

/** `at`, or one less when `at` would fall between a high and a low surrogate (so no code point is cut in two). */
function boundary(text: string, at: number): number {
  const before = text.charCodeAt(at - 1);
  return before >= 0xd800 && before <= 0xdbff ? at - 1 : at;
}
