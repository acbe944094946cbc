// The layers of src/: which folder may import which. LAYERS (test/project/layers.ts) is the one table of allowed
// imports, which the architecture page shows as npm run docs:architecture writes it; every relative import in src/
// and durable-objects/ must follow it, neither the table nor the modules have a cycle, and the leaves (lib/, errors/,
// errors.ts, contracts/) import nothing above themselves. And the unit tests (*.unit.test.ts, project "unit", in Node)
// reach no cloudflare: module through their imports, their modules' imports, and so on down. The sources are read as
// text through vite's `import.meta.glob`.
import { describe, expect, it } from "vitest";
import { FLOOR, LAYERS, TYPE_ONLY } from "./layers.ts";

interface Import {
  /** The importing file, from the repository root. */
  file: string;
  /** The imported file, from the repository root. */
  target: string;
  typeOnly: boolean;
  /** `import("…")` evaluated when the code runs, not when the module loads. */
  dynamic: boolean;
}

/**
 * The modules that build the response schemas (responses.ts) and the OpenAPI document made of them: building them in
 * every isolate would cost CPU at each cold start for nothing. So only these modules import each other for more than
 * types, and the Worker reaches them through one import(), the first GET /openapi.json's (LAZY_LOADER).
 */
const LAZY_MODULES = ["src/http/responses", "src/http/openapi/operations", "src/http/openapi/document"];
const LAZY_LOADER = "src/http/openapi/routes.ts";
/**
 * The response schemas and the operation tables of the document, one module per resource: lazy like the modules that
 * gather them.
 */
const LAZY_FOLDERS = ["src/http/responses", "src/http/openapi/operations"];

/** The code whose imports are checked, by path from the repository root. */
const sources: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>(["../../src/**/*.{ts,tsx}", "../../durable-objects/*.ts"], {
      query: "?raw",
      import: "default",
      eager: true,
    }),
  ).map(([key, text]) => [key.replace(/^\.\.\/\.\.\//, ""), text]),
);

/** This file, from the repository root: the keys of the glob below are relative to it. */
const HERE = "test/project/layering.unit.test.ts";

/**
 * Every TypeScript file of the repository, by path from the repository root: the unit tests among them, and whatever
 * their imports can reach.
 */
const repository: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>(
      [
        "../**/*.ts",
        "../../{src,durable-objects,client/src,console,emulator,scripts,bench}/**/*.{ts,tsx}",
        "../../vitest.config.ts",
      ],
      { query: "?raw", import: "default", eager: true },
    ),
  ).map(([key, text]) => [resolve(HERE, key), text]),
);

/** `import … from "…"`, `export … from "…"` and `import "…"` statements (the clause: names, braces, `* as`). */
const STATIC_IMPORT = /^\s*(?:import|export)\s+(type\s+)?(?:[\w\s{},*$]*?\s+from\s+)?["']([^"']+)["']/gm;
/** `import("…")`: a type when written `typeof import("…")` or `import("…").Name`, else a dynamic import. */
const INLINE_IMPORT = /(typeof\s+)?\bimport\(\s*["']([^"']+)["']\s*\)(\s*\.\s*[A-Za-z_$])?/g;

/** Every module a file's text imports, as written: a relative path, a package or a `cloudflare:` module. */
function specifiersOf(text: string): { spec: string; typeOnly: boolean; dynamic: boolean }[] {
  const found = [...text.matchAll(STATIC_IMPORT)].map((m) => ({
    spec: m[2] ?? "",
    typeOnly: m[1] !== undefined,
    dynamic: false,
  }));
  for (const m of text.matchAll(INLINE_IMPORT)) {
    const typeOnly = m[1] !== undefined || m[3] !== undefined;
    found.push({ spec: m[2] ?? "", typeOnly, dynamic: !typeOnly });
  }
  return found;
}

/** The relative imports of each file, resolved to paths from the repository root. */
function importsOf(files: Readonly<Record<string, string>>): Import[] {
  return Object.entries(files).flatMap(([file, text]) =>
    specifiersOf(text)
      .filter(({ spec }) => spec.startsWith("."))
      .map(({ spec, typeOnly, dynamic }) => ({ file, target: resolve(file, spec), typeOnly, dynamic })),
  );
}

function resolve(file: string, spec: string): string {
  const parts = file.split("/").slice(0, -1);
  for (const part of spec.split("/")) {
    if (part === "..") parts.pop();
    else if (part !== ".") parts.push(part);
  }
  return parts.join("/");
}

/** The row a file belongs to: its folder under src/, its name at the root of src/, or durable-objects. */
function layerOf(path: string): string {
  const [top, second] = path.split("/");
  return (top === "src" ? second : top) ?? "";
}

function onFloor(layer: string): boolean {
  return (FLOOR as readonly string[]).includes(layer);
}

function mayImport(from: string, to: string): boolean {
  if (from === to) return true;
  if (onFloor(to) && !onFloor(from)) return true;
  return LAYERS[from]?.includes(to) ?? false;
}

/**
 * How each unit test reaches a `cloudflare:` module, which Node cannot load: the chain of imports from the test to
 * it, as "test → module → … → cloudflare:…". Imports for types only are left out (they are erased); the walk follows
 * every other relative import into the repository's TypeScript files (a target outside them is no module of ours).
 */
function workersOnlyImports(files: Readonly<Record<string, string>>): string[] {
  const chains: string[] = [];
  for (const test of Object.keys(files).filter((file) => file.endsWith(".unit.test.ts"))) {
    const seen = new Set<string>();
    const walk = (file: string, chain: readonly string[]): void => {
      seen.add(file);
      for (const { spec, typeOnly } of specifiersOf(files[file] ?? "")) {
        if (typeOnly) continue;
        if (spec.startsWith("cloudflare:")) chains.push([...chain, spec].join(" → "));
        const target = resolve(file, spec);
        if (spec.startsWith(".") && files[target] !== undefined && !seen.has(target)) walk(target, [...chain, target]);
      }
    };
    walk(test, [test]);
  }
  return chains;
}

/** Every import the table does not allow, as "file → target". */
function violations(files: Readonly<Record<string, string>>): string[] {
  return importsOf(files)
    .filter(({ file, target }) => !mayImport(layerOf(file), layerOf(target)))
    .map(({ file, target }) => `${file} → ${target}`);
}

describe("layering of src/", () => {
  it("every import follows the table of allowed imports", () => {
    expect(violations(sources)).toEqual([]);
  });

  it("reports an import the table does not allow", () => {
    const files = {
      "src/lib/leaf.ts": 'import { Agent } from "../agents/agent.ts";\n',
      "src/tools/tool.ts": 'import type { AgentContext } from "../agents/context.ts";\n',
      "src/agents/agent.ts": 'const load = () => import("../runtime/runner.ts");\n',
      "src/contracts/runtime.ts": 'export { ConfigError } from "../errors.ts";\n',
    };
    expect(violations(files)).toEqual([
      "src/lib/leaf.ts → src/agents/agent.ts",
      "src/tools/tool.ts → src/agents/context.ts",
      "src/agents/agent.ts → src/runtime/runner.ts",
      "src/contracts/runtime.ts → src/errors.ts",
    ]);
  });

  it("has a row for every folder and root file of src/", () => {
    const layers = new Set(Object.keys(sources).map(layerOf));
    expect([...layers].filter((layer) => LAYERS[layer] === undefined)).toEqual([]);
    expect(Object.keys(LAYERS).filter((layer) => !layers.has(layer))).toEqual([]);
  });

  it("keeps lib/ free of imports from src/, errors/ to lib/, errors.ts to errors/, and contracts/ to lib/ and errors/", () => {
    const leafImports = importsOf(sources)
      .map(({ file, target }) => ({ file, from: layerOf(file), to: layerOf(target) }))
      .filter(({ from, to }) => onFloor(from) && from !== to && !(LAYERS[from] ?? []).includes(to));
    expect(leafImports).toEqual([]);
  });

  it("imports env.ts, and lets env.ts import, for types only", () => {
    const valueImports = importsOf(sources)
      .filter(({ file, target }) => layerOf(file) !== layerOf(target))
      .filter(({ file, target }) => layerOf(target) === TYPE_ONLY || layerOf(file) === TYPE_ONLY)
      .filter(({ typeOnly }) => !typeOnly)
      .map(({ file, target }) => `${file} → ${target}`);
    expect(valueImports).toEqual([]);
  });

  it("builds the response schemas only for GET /openapi.json: imported for types only, or lazily by its route", () => {
    const lazy = (path: string) =>
      LAZY_MODULES.includes(path.replace(/\.ts$/, "")) || LAZY_FOLDERS.some((folder) => path.startsWith(`${folder}/`));
    const valueImports = importsOf(sources)
      .filter(({ target, typeOnly }) => lazy(target) && !typeOnly)
      .filter(({ file, dynamic }) => !(dynamic ? file === LAZY_LOADER : lazy(file)))
      .map(({ file, target }) => `${file} → ${target}`);
    expect(valueImports).toEqual([]);
    // The route does load the document, lazily: the rule above is not met by the document being unreachable.
    expect(importsOf(sources).filter(({ file, dynamic }) => file === LAZY_LOADER && dynamic)).toMatchObject([
      { target: "src/http/openapi/document.ts" },
    ]);
  });

  it("has no import cycle between modules, apart from env.ts's type-only imports", () => {
    const graph = new Map<string, string[]>();
    for (const { file, target } of importsOf(sources)) {
      if (layerOf(file) === TYPE_ONLY || layerOf(target) === TYPE_ONLY) continue;
      graph.set(file, [...(graph.get(file) ?? []), target]);
    }
    const cycles: string[] = [];
    const seen = new Map<string, "open" | "done">();
    const visit = (file: string, path: readonly string[]): void => {
      seen.set(file, "open");
      for (const next of graph.get(file) ?? []) {
        if (seen.get(next) === "open") cycles.push([...path.slice(path.indexOf(next)), next].join(" → "));
        else if (!seen.has(next)) visit(next, [...path, next]);
      }
      seen.set(file, "done");
    };
    for (const file of Object.keys(sources)) if (!seen.has(file)) visit(file, [file]);
    expect(cycles).toEqual([]);
  });

  it("allows no cycle between layers, apart from env.ts's type-only imports", () => {
    const cycles: string[] = [];
    const seen = new Map<string, "open" | "done">();
    const visit = (layer: string, path: readonly string[]): void => {
      seen.set(layer, "open");
      for (const next of layer === TYPE_ONLY ? [] : (LAYERS[layer] ?? [])) {
        if (next === TYPE_ONLY) continue;
        if (seen.get(next) === "open") cycles.push([...path.slice(path.indexOf(next)), next].join(" → "));
        else if (!seen.has(next)) visit(next, [...path, next]);
      }
      seen.set(layer, "done");
    };
    for (const layer of Object.keys(LAYERS)) if (!seen.has(layer)) visit(layer, [layer]);
    expect(cycles).toEqual([]);
  });
});

describe('the unit tests (project "unit", in Node)', () => {
  it("reach no cloudflare: module, neither directly nor through the modules they import", () => {
    // The glob leaves out this file itself (its imports are vitest and ./layers.ts); its neighbour is in.
    expect(Object.keys(repository)).toContain("test/project/docs.unit.test.ts");
    expect(workersOnlyImports(repository)).toEqual([]);
  });

  it("reports the chain of imports that reaches one", () => {
    const files = {
      "test/lib/a.unit.test.ts": 'import { helper } from "../support/helper.ts";\n',
      "test/support/helper.ts": 'export { leaf } from "../../src/lib/leaf.ts";\n',
      "src/lib/leaf.ts": 'import type { Env } from "cloudflare:workers";\nconst e = () => import("./env.ts");\n',
      "src/lib/env.ts": 'import { env } from "cloudflare:workers";\n',
      "test/lib/b.unit.test.ts": 'import { SELF } from "cloudflare:test";\n',
      "test/lib/c.test.ts": 'import { env } from "cloudflare:workers";\n',
    };
    expect(workersOnlyImports(files)).toEqual([
      "test/lib/a.unit.test.ts → test/support/helper.ts → src/lib/leaf.ts → src/lib/env.ts → cloudflare:workers",
      "test/lib/b.unit.test.ts → cloudflare:test",
    ]);
  });
});
