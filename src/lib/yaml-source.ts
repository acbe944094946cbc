// A YAML (or JSON) document read for a definition file (agents/, workflows/): its value, and the line of any key
// in it, so that an error names the line of the key it is about. Duplicate keys, an alias of no anchor and aliases
// that expand past a small count (a "billion laughs") are refused; a syntax error carries its line, and an alias's
// refusal the key of the alias too.
import { type Document, isAlias, isMap, isPair, isScalar, isSeq, LineCounter, type Node, parseDocument } from "yaml";

/** Aliases a document may expand (the "billion laughs" guard). */
const MAX_ALIASES = 50;

export interface YamlSource {
  readonly value: unknown;
  /** The 1-based line of the key at `keys` (or of the deepest part of it the document has), or null. */
  lineOf(keys: readonly PropertyKey[]): number | null;
}

/** A document that is not valid YAML: `line` is where the first problem is, `keys` the key it is at when known. */
export class YamlSyntaxError extends Error {
  readonly line: number;
  readonly keys: readonly PropertyKey[] | null;
  constructor(line: number, message: string, keys: readonly PropertyKey[] | null = null) {
    super(message);
    this.name = "YamlSyntaxError";
    this.line = line;
    this.keys = keys;
  }
}

export function readYaml(source: string): YamlSource {
  const lines = new LineCounter();
  const doc = parseDocument(source, { lineCounter: lines, uniqueKeys: true, prettyErrors: false });
  const syntax = doc.errors[0];
  if (syntax) {
    throw new YamlSyntaxError(lines.linePos(syntax.pos[0]).line, `not valid YAML: ${syntax.message.split("\n")[0]}`);
  }
  const alias = aliasProblem(doc);
  if (alias) {
    const line = alias.node.range ? lines.linePos(alias.node.range[0]).line : 1;
    throw new YamlSyntaxError(line, alias.message, alias.keys);
  }
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: MAX_ALIASES });
  } catch (error) {
    // What aliasProblem did not foresee: still the document's fault, never the reader's.
    if (!(error instanceof ReferenceError)) throw error;
    throw new YamlSyntaxError(1, `not valid YAML: ${error.message}`);
  }
  return { value, lineOf: (keys) => keyLine(doc.contents, keys, lines) };
}

interface AliasProblem {
  node: Node;
  keys: PropertyKey[];
  message: string;
}

/**
 * The first alias, in document order, that names no anchor before it or that the parser's guard would refuse: the
 * yaml package counts each anchor's uses times the aliases its node expands to (Alias.resolve), and refuses past
 * MAX_ALIASES. Counted the same way here, before the document is converted, so the refusal names the alias's key.
 */
function aliasProblem(doc: Document): AliasProblem | null {
  const anchors = new Map<string, Node>();
  const uses = new Map<Node, { count: number; expands: number }>();
  const expandsOf = (node: unknown): number => {
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      const use = target ? uses.get(target) : undefined;
      return use ? use.count * use.expands : 0;
    }
    if (isMap(node) || isSeq(node)) {
      return Math.max(0, ...(node.items as unknown[]).map((item) => expandsOf(item)));
    }
    if (isPair(node)) return Math.max(expandsOf(node.key), expandsOf(node.value));
    return 1;
  };
  const walk = (node: unknown, keys: PropertyKey[]): AliasProblem | null => {
    if (isAlias(node)) {
      const target = anchors.get(node.source);
      if (!target) {
        return { node, keys, message: `not valid YAML: the alias *${node.source} names no anchor before it` };
      }
      const use = uses.get(target) ?? { count: 0, expands: expandsOf(target) };
      use.count += 1;
      uses.set(target, use);
      if (use.count * use.expands > MAX_ALIASES) {
        return { node, keys, message: `aliases expand past ${MAX_ALIASES} values here (a "billion laughs" document)` };
      }
      return null;
    }
    if (!isMap(node) && !isSeq(node) && !isScalar(node)) return null;
    // An anchor is known from its node on (the yaml package resolves an alias to the last one before it).
    if (node.anchor) anchors.set(node.anchor, node);
    const items: [PropertyKey, unknown][] = isMap(node)
      ? node.items.map((pair) => [isScalar(pair.key) ? String(pair.key.value) : "?", pair.value])
      : isSeq(node)
        ? node.items.map((item, index) => [index, item])
        : [];
    for (const [key, child] of items) {
      const problem = walk(child, [...keys, key]);
      if (problem) return problem;
    }
    return null;
  };
  return walk(doc.contents, []);
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
