// Bodies refused whatever the route, for the fuzz tests: a body that is fine as it is, with one defect put at one
// place in it (nesting past level 32, a lone surrogate in a string or a key, a "__proto__" key), and seed files
// whose folders take the workspace past its entries; each with the field the API must name.
import fc, { type Arbitrary } from "fast-check";
import { lonelySurrogate } from "./arbitraries.ts";
import { MAX_JSON_DEPTH, utf8 } from "./oracles.ts";

type Key = string | number;

/** Sets an own property, "__proto__" included (an assignment to "__proto__" would set the prototype instead). */
function setOwn(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

/** A copy of `body` with `value` at `path`, making the objects and arrays on the way (a number is an index). */
function placed(body: unknown, path: readonly Key[], value: unknown): unknown {
  const [key, ...rest] = path;
  if (key === undefined) return value;
  if (typeof key === "number") {
    const list: unknown[] = Array.isArray(body) ? [...body] : [];
    while (list.length < key) list.push(0);
    list[key] = placed(list[key], rest, value);
    return list;
  }
  const object: Record<string, unknown> =
    typeof body === "object" && body !== null && !Array.isArray(body) ? { ...body } : {};
  setOwn(object, key, placed(object[key], rest, value));
  return object;
}

/** The value at `path`, or undefined. */
function valueAt(body: unknown, path: readonly Key[]): unknown {
  let at: unknown = body;
  for (const key of path) at = typeof at === "object" && at !== null ? (at as Record<Key, unknown>)[key] : undefined;
  return at;
}

/** A body that is fine as it is, and the places in it where a defect goes. */
export interface Target {
  base: unknown;
  slots: Key[][];
}

/** One level of a deeply nested value: an object's only key, or an array's last index (after clean items). */
type DeepStep = { key: string } | { index: number };

/** What is wrong with a body, put at one place in it. */
type Defect =
  | { kind: "deep"; steps: DeepStep[]; tail: number }
  | { kind: "surrogate"; text: string }
  | { kind: "surrogate_key"; key: string; value: unknown }
  | { kind: "proto"; value: unknown; before: boolean };

const DEEP_PLACEHOLDER = "\u0001deep\u0001";

/** JSON text of the nested value, built without recursion: `steps` levels, then `tail` levels of arrays. */
function deepText(steps: readonly DeepStep[], tail: number): string {
  const open: string[] = [];
  const close: string[] = [];
  for (const step of steps) {
    open.push("key" in step ? `{${JSON.stringify(step.key)}:` : `[${"0,".repeat(step.index)}`);
    close.push("key" in step ? "}" : "]");
  }
  return `${open.join("")}${"[".repeat(tail)}1${"]".repeat(tail)}${close.reverse().join("")}`;
}

/**
 * `base` with the defect at `slot`, as JSON bytes, and the field the API must name: the path of the value (deep:
 * of the first array or object past level 32; a key defect: of the key, added to the object at `slot`).
 */
export function withDefect(base: unknown, slot: readonly Key[], defect: Defect): { body: Uint8Array; field: string } {
  const name = (path: readonly Key[]) => (path.length === 0 ? "(body)" : path.join("."));
  switch (defect.kind) {
    case "deep": {
      // The value at the slot is at level slot.length + 1; the level-33 one is reached through 32 - slot.length steps.
      const inner = defect.steps.slice(0, MAX_JSON_DEPTH - slot.length).map((s) => ("key" in s ? s.key : s.index));
      const text = JSON.stringify(placed(base, slot, DEEP_PLACEHOLDER)).replace(JSON.stringify(DEEP_PLACEHOLDER), () =>
        deepText(defect.steps, defect.tail),
      );
      return { body: utf8.encode(text), field: name([...slot, ...inner]) };
    }
    case "surrogate":
      return { body: utf8.encode(JSON.stringify(placed(base, slot, defect.text))), field: name(slot) };
    case "surrogate_key":
    case "proto": {
      const key = defect.kind === "proto" ? "__proto__" : defect.key;
      const existing = valueAt(base, slot);
      const object: Record<string, unknown> =
        typeof existing === "object" && existing !== null && !Array.isArray(existing) ? { ...existing } : {};
      if (defect.kind === "proto" && defect.before) setOwn(object, "note", "kept");
      setOwn(object, key, defect.value);
      return { body: utf8.encode(JSON.stringify(placed(base, slot, object))), field: name([...slot, key]) };
    }
  }
}

const cleanText = fc.string({ maxLength: 8 });
const cleanValue = fc.oneof(
  cleanText,
  fc.integer(),
  fc.constant(null),
  fc.dictionary(cleanText, cleanText, { maxKeys: 2 }),
);
const deepStep: Arbitrary<DeepStep> = fc.oneof(
  fc.string({ maxLength: 5 }).map((key) => ({ key })),
  fc.nat({ max: 3 }).map((index) => ({ index })),
);
/** A text with one half of a surrogate pair, alone, anywhere in it. */
const surrogateText = fc
  .tuple(cleanText, lonelySurrogate, cleanText)
  .map(([before, half, after]) => `${before}${half}${after}`);
export const defect: Arbitrary<Defect> = fc.oneof(
  fc.record({
    kind: fc.constant("deep" as const),
    // At least 33 levels below any slot; sometimes thousands more, as a stack-overflow attempt would send.
    steps: fc.array(deepStep, { minLength: 33, maxLength: 60 }),
    tail: fc.oneof({ weight: 4, arbitrary: fc.nat({ max: 200 }) }, { weight: 1, arbitrary: fc.constant(60_000) }),
  }),
  fc.record({ kind: fc.constant("surrogate" as const), text: surrogateText }),
  fc.record({ kind: fc.constant("surrogate_key" as const), key: surrogateText, value: cleanValue }),
  fc.record({ kind: fc.constant("proto" as const), value: cleanValue, before: fc.boolean() }),
);

/**
 * Seed files whose folders take the workspace past its 10,000 files and folders (MAX_WORKSPACE_ENTRIES): each file
 * has its own top folder and `depth` folders in all, so file k (from 1) brings the count to k × (depth + 1); the
 * field names the first file past the limit.
 */
export const overflowingFiles = fc
  .record({
    count: fc.integer({ min: 400, max: 500 }),
    depth: fc.integer({ min: 25, max: 40 }),
    salt: fc.nat({ max: 96 }),
    prefix: fc.constantFrom("", "/workspace/"),
  })
  .map(({ count, depth, salt, prefix }) => {
    const files: Record<string, string> = {};
    const names: string[] = [];
    for (let i = 0; i < count; i++) {
      const folders = Array.from({ length: depth - 1 }, (_, j) => `s${(i * 31 + j * 7 + salt) % 97}`);
      const name = `${prefix}t${i}/${folders.join("/")}/f.txt`;
      files[name] = "x";
      names.push(name);
    }
    const first = names[Math.floor(10_000 / (depth + 1))] ?? "";
    return { files, field: `files.${first}` };
  });
