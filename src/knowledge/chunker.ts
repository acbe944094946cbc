// A Markdown-aware chunker for documents uploaded to a collection: each chunk is a run of whole paragraphs of one
// section, at most MAX_CHUNK_CHARS long, and keeps its heading path (["Guide", "Install", "Linux"]), so a search hit
// says where in the document it comes from and the hierarchical tool can return a whole section. Written by hand (no
// well-kept library does this in workerd): ATX headings (`#` to `######`, CommonMark §4.2) open sections; fenced code
// blocks (``` or ~~~, §4.5) are never split and their `#` lines are not headings; a paragraph longer than a chunk is cut
// at sentence ends, then at spaces.

/** Longest chunk, in characters (about 300 tokens of English): small enough to be specific, big enough for context. */
export const MAX_CHUNK_CHARS = 1_200;

export interface Chunk {
  /** Position in the document, from 0. */
  index: number;
  /** The headings above the chunk, outermost first (the document's title, when given, is not one). */
  headingPath: string[];
  text: string;
}

const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/** The document's chunks, in order. Empty text gives none. */
export function chunkMarkdown(text: string, maxChars = MAX_CHUNK_CHARS): Chunk[] {
  const chunks: Chunk[] = [];
  const headings: string[] = [];
  let blocks: string[] = [];
  const flushSection = () => {
    for (const piece of packBlocks(blocks, maxChars)) {
      chunks.push({ index: chunks.length, headingPath: [...headings], text: piece });
    }
    blocks = [];
  };
  let paragraph: string[] = [];
  const endParagraph = () => {
    const block = paragraph.join("\n").trim();
    if (block) blocks.push(block);
    paragraph = [];
  };
  let fence: string | null = null;
  for (const line of text.replace(/\r\n?/g, "\n").split("\n")) {
    if (fence !== null) {
      paragraph.push(line);
      if (line.trim().startsWith(fence)) {
        fence = null;
        endParagraph();
      }
      continue;
    }
    const opening = FENCE.exec(line);
    if (opening?.[1]) {
      endParagraph();
      fence = opening[1];
      paragraph.push(line);
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading?.[1]) {
      endParagraph();
      flushSection();
      const level = heading[1].length;
      headings.length = Math.min(headings.length, level - 1);
      headings.push((heading[2] ?? "").trim());
      continue;
    }
    if (line.trim() === "") endParagraph();
    else paragraph.push(line);
  }
  endParagraph();
  flushSection();
  return chunks;
}

/** Whole blocks packed into chunks of at most `max` characters; a block longer than that is cut first. */
function packBlocks(blocks: readonly string[], max: number): string[] {
  const out: string[] = [];
  let current = "";
  for (const block of blocks.flatMap((b) => (b.length > max ? cutLong(b, max) : [b]))) {
    if (current && current.length + 2 + block.length > max) {
      out.push(current);
      current = "";
    }
    current = current ? `${current}\n\n${block}` : block;
  }
  if (current) out.push(current);
  return out;
}

/** A block cut into pieces of at most `max` characters: at a sentence end, else a space, else anywhere. */
function cutLong(block: string, max: number): string[] {
  const pieces: string[] = [];
  let rest = block;
  while (rest.length > max) {
    const window = rest.slice(0, max);
    const sentence = Math.max(window.lastIndexOf(". "), window.lastIndexOf(".\n"), window.lastIndexOf("? "));
    const space = Math.max(window.lastIndexOf(" "), window.lastIndexOf("\n"));
    const at = sentence > max / 2 ? sentence + 1 : space > max / 2 ? space : max;
    pieces.push(rest.slice(0, at).trim());
    rest = rest.slice(at).trim();
  }
  if (rest) pieces.push(rest);
  return pieces;
}
