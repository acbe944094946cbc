// A YAML (or JSON) document read for a definition file (agents/, workflows/): its value, and the line of any key
// in it, so that an error names the line of the key it is about. Duplicate keys and aliases past a small count are
// refused; a syntax error carries its line.
import { isMap, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";

/** Aliases a document may expand (the "billion laughs" guard). */
const MAX_ALIASES = 50;

export interface YamlSource {
  readonly value: unknown;
  /** The 1-based line of the key at `keys` (or of the deepest part of it the document has), or null. */
  lineOf(keys: readonly PropertyKey[]): number | null;
}

/** A document that is not valid YAML: `line` is where the first problem is. */
export class YamlSyntaxError extends Error {
  readonly line: number;
  constructor(line: number, message: string) {
    super(message);
    this.name = "YamlSyntaxError";
    this.line = line;
  }
}

export function readYaml(source: string): YamlSource {
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const syntax = doc.errors[0];
  if (syntax) {
    throw new YamlSyntaxError(lines.linePos(syntax.pos[0]).line, `not valid YAML: ${syntax.message.split("\n")[0]}`);
  }
  return {
    value: doc.toJS({ maxAliasCount: MAX_ALIASES }) as unknown,
    lineOf: (keys) => keyLine(doc.contents, keys, lines),
  };
}

function keyLine(root: Node | null, keys: readonly PropertyKey[], lines: LineCounter): number | null {
  let node: unknown = root;
  let at: number | null = null;
  for (const key of keys) {
    if (isMap(node)) {
      const pair = node.items.find((p) => isScalar(p.key) && String(p.key.value) === String(key));
      if (!pair) break;
      const start = isScalar(pair.key) ? pair.key.range?.[0] : undefined;
      if (start !== undefined) at = start;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(key)];
      if (!item) break;
      const start = (item as Node).range?.[0];
      if (start !== undefined) at = start;
      node = item;
    } else break;
  }
  return at === null ? null : lines.linePos(at).line;
}
