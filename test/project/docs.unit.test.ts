// The docs stay true to the code: the events reference shows the event catalog's table and the errors reference
// the error-code registry's tables; every link and every path the README, AGENTS.md and docs/ name
// exists; and the configuration reference lists exactly the configuration the code reads. Files are read through
// vite's `?raw` imports and `import.meta.glob`.
import { describe, expect, it } from "vitest";
import agentsGuide from "../../AGENTS.md?raw";
import readme from "../../README.md?raw";
import { renderEventTable, TABLE_END, TABLE_START } from "../../scripts/event-table.ts";
import { EVENT_TYPES } from "../../src/contracts/events.ts";
import envSource from "../../src/env.ts?raw";
import { ERROR_CODES, type ErrorCodeSpec } from "../../src/errors/codes.ts";
import redactionSource from "../../src/events/redaction.ts?raw";
import wranglerToml from "../../wrangler.toml?raw";
import { LAYERS_END, LAYERS_START, renderLayers } from "./layers.ts";

/** Every docs page, keyed by its path from the repository root. */
const docsPages: Record<string, string> = Object.fromEntries(
  Object.entries(import.meta.glob<string>("../../docs/**/*.md", { query: "?raw", import: "default", eager: true })).map(
    ([key, text]) => [fromRoot(key), text],
  ),
);

/** The pages the link and path checks read. */
const pages: Record<string, string> = { "README.md": readme, "AGENTS.md": agentsGuide, ...docsPages };

/** The source of the Worker and its Durable Objects, for what the code raises and reads. */
const sources: Record<string, string> = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>(["../../src/**/*.ts", "../../durable-objects/*.ts"], {
      query: "?raw",
      import: "default",
      eager: true,
    }),
  ).map(([key, text]) => [fromRoot(key), text]),
);

/**
 * Every file of the repository a page may name (the keys of a lazy glob: nothing is loaded). Hidden folders,
 * node_modules and .wrangler are not matched.
 */
const repoFiles: readonly string[] = Object.keys(
  import.meta.glob([
    "../../*",
    "../../src/**",
    "../../client/**",
    "../../test/**",
    "../../durable-objects/**",
    "../../scripts/**",
    "../../bench/**",
    "../../emulator/**",
    "../../skills/**",
    "../../agents/**",
    "../../workflows/**",
    "../../console/**",
    "../../docs/**",
  ]),
)
  .map(fromRoot)
  .concat("test/project/docs.unit.test.ts"); // a glob never lists the file that holds it

/** Paths the pages name that exist only after a command has run (gitignored outputs). */
const GENERATED = ["bench/results/"];

/** The folders whose backticked paths must exist. */
const CHECKED_PREFIXES = [
  "src/",
  "client/",
  "test/",
  "durable-objects/",
  "scripts/",
  "bench/",
  "emulator/",
  "agents/",
  "workflows/",
  "console/",
];

/** A glob key (relative to this file: `../../src/env.ts`, `../support/helpers.ts`, `./layering.unit.test.ts`) as a path from the repository root. */
function fromRoot(globKey: string): string {
  if (globKey.startsWith("./")) return `test/project/${globKey.slice(2)}`;
  if (globKey.startsWith("../../")) return globKey.slice(6);
  // A file of another folder of test/ (vite names it from this file's folder: `../support/helpers.ts`).
  return `test/${globKey.slice(3)}`;
}

/** A page's text outside fenced code blocks, line by line (code blocks may show anything). */
function prose(text: string): string[] {
  let fenced = false;
  const lines: string[] = [];
  for (const line of text.split("\n")) {
    if (/^\s*```/.test(line)) fenced = !fenced;
    else if (!fenced) lines.push(line);
  }
  return lines;
}

/** Whether a repository path names a file or a folder that exists (a folder: any file below it). */
function exists(path: string): boolean {
  const clean = path.replace(/\/+$/, "");
  if (clean === "" || clean === ".") return true;
  return repoFiles.some((file) => file === clean || file.startsWith(`${clean}/`));
}

/** Resolves `target` (relative, with ./ and ../) against the folder of `page`; null when it leaves the repository. */
function resolveFrom(page: string, target: string): string | null {
  const parts = page.split("/").slice(0, -1);
  for (const part of target.split("/")) {
    if (part === "." || part === "") continue;
    if (part === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return `${parts.join("/")}${target.endsWith("/") ? "/" : ""}`;
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of prose(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const visible = heading.replace(/\[([^\]]*)\]\([^)]*\)/g, "$1").replace(/`/g, "");
    const base = visible
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, "")
      .replace(/\s/g, "-");
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    out.add(count === 0 ? base : `${base}-${count}`);
  }
  return out;
}

/** The rows of the first Markdown table after `heading`, as trimmed cells. */
function tableAfter(text: string, heading: string): string[][] {
  const start = text.indexOf(heading);
  expect(start, `${heading} not found`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  const lines = text.slice(start).split("\n");
  for (const line of heading.startsWith("|") ? lines : lines.slice(1)) {
    if (line.startsWith("|"))
      rows.push(
        line
          .split("|")
          .slice(1, -1)
          .map((cell) => cell.trim()),
      );
    else if (rows.length > 0) break;
  }
  return rows.slice(2); // the header row and its separator
}

describe("architecture", () => {
  it("shows the layering test's table of allowed imports as it is (npm run docs:architecture writes it)", () => {
    const page = docsPages["docs/architecture.md"] ?? "";
    const start = page.indexOf(LAYERS_START);
    expect(start).toBeGreaterThan(-1);
    expect(page.slice(start + LAYERS_START.length, page.indexOf(LAYERS_END)).trim()).toBe(renderLayers());
  });

  it("maps every folder of src/ in its code map", () => {
    const page = docsPages["docs/architecture.md"] ?? "";
    const folders = new Set(Object.keys(sources).flatMap((path) => /^src\/([^/]+)\//.exec(path)?.[1] ?? []));
    const mapped = [...page.matchAll(/^\| \[`src\/([^/`]+)\/`\]/gm)].map((m) => m[1]);
    expect([...folders].filter((folder) => !mapped.includes(folder))).toEqual([]);
  });
});

describe("events reference", () => {
  it("documents every event type in the vocabulary, and no other", () => {
    const events = docsPages["docs/reference/events.md"] ?? "";
    const section = events.slice(events.indexOf("## Event types"), events.indexOf("## Adding an event type"));
    const documented = section
      .split("\n")
      .filter((line) => line.startsWith("| `"))
      .flatMap((line) => [...(line.split("|")[1] ?? "").matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
    expect(new Set(documented)).toEqual(new Set(EVENT_TYPES));
  });

  it("shows the event catalog's table as scripts/event-table.ts renders it (npm run docs:events writes it)", () => {
    const events = docsPages["docs/reference/events.md"] ?? "";
    const start = events.indexOf(TABLE_START);
    expect(start).toBeGreaterThan(-1);
    expect(events.slice(start + TABLE_START.length, events.indexOf(TABLE_END)).trim()).toBe(renderEventTable());
  });
});

describe("errors reference", () => {
  // The page's tables are the registry's (src/errors/codes.ts; npm run docs:errors writes them), row by row and in
  // order: status, code and when for the HTTP errors, code, retryable and when for the failed tasks' codes, and the
  // codes found only in events or never sent.
  const page = docsPages["docs/reference/errors.md"] ?? "";
  const codes = Object.entries(ERROR_CODES) as [string, ErrorCodeSpec][];
  /** The rows of the first table below `heading`, as cells. */
  const rows = (heading: string) => tableAfter(page, heading);

  it("lists every HTTP error of the registry, with its status and when, by status", () => {
    const expected = codes
      .flatMap(([code, spec]) =>
        spec.request ? [[String(spec.request.status), `\`${code}\``, spec.request.when]] : [],
      )
      .sort((a, b) => Number(a[0]) - Number(b[0]));
    expect(expected.length).toBeGreaterThanOrEqual(30);
    expect(rows("## HTTP errors")).toEqual(expected);
  });

  it("lists every failed task's code of the registry, with its retryability and when", () => {
    const expected = codes.flatMap(([code, spec]) =>
      spec.task ? [[`\`${code}\``, spec.task.retryable ? "yes" : "no", spec.task.when]] : [],
    );
    expect(expected.length).toBeGreaterThanOrEqual(20);
    expect(rows("## Failed tasks")).toEqual(expected);
  });

  it("lists the codes of failed MCP tool calls, and the codes that never reach a client", () => {
    const only = (facet: "event" | "internal") =>
      codes.flatMap(([code, spec]) => {
        const when = spec[facet]?.when;
        return when === undefined ? [] : [[`\`${code}\``, when]];
      });
    expect(rows("## Errors in events")).toEqual(only("event"));
    expect(rows("## Codes that never reach a client")).toEqual(only("internal"));
  });
});

describe("links and paths", () => {
  it("reads the README, AGENTS.md and every docs page", () => {
    expect(Object.keys(docsPages).length).toBeGreaterThanOrEqual(20);
    expect(repoFiles).toContain("src/env.ts");
  });

  it("resolves every relative link to an existing file, and every anchor to a heading of its page", () => {
    const broken: string[] = [];
    for (const [page, text] of Object.entries(pages)) {
      for (const line of prose(text)) {
        for (const m of line.matchAll(/\[[^\]]*\]\(([^)\s]+)\)/g)) {
          const target = m[1] ?? "";
          if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
          const [path = "", anchor] = target.split("#");
          const file = path === "" ? page : resolveFrom(page, path);
          if (file === null || !exists(file)) {
            broken.push(`${page}: ${target} (no such file)`);
            continue;
          }
          if (anchor === undefined) continue;
          const linked = pages[file];
          if (linked === undefined) broken.push(`${page}: ${target} (an anchor into a file that is not a page)`);
          else if (!anchors(linked).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it("names only paths that exist in src/, test/, durable-objects/, scripts/, bench/, emulator/, agents/, workflows/ and console/", () => {
    const missing: string[] = [];
    for (const [page, text] of Object.entries(pages)) {
      for (const line of prose(text)) {
        for (const m of line.matchAll(/`([^`]+)`/g)) {
          const span = m[1] ?? "";
          if (!CHECKED_PREFIXES.some((prefix) => span.startsWith(prefix)) || /\s/.test(span)) continue;
          if (GENERATED.some((prefix) => span.startsWith(prefix))) continue;
          // A placeholder (`src/tools/<name>.ts`) names a file to be written, and a glob (`agents/*.yaml`) files of a
          // folder: the folder must exist.
          const wild = span.search(/[<*]/);
          const path = wild >= 0 ? span.slice(0, span.lastIndexOf("/", wild) + 1) : span;
          if (!exists(path)) missing.push(`${page}: ${span}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  it("opens every docs page with its Code and Tests line", () => {
    const without = Object.entries(docsPages)
      .filter(([, text]) => !/^Code: .+ · Tests: .+$/.test(text.split("\n")[0] ?? ""))
      .map(([page]) => page);
    expect(without).toEqual([]);
  });

  it("links every capability of the README's table to a docs page that exists, and its code folder", () => {
    const rows = tableAfter(readme, "## Capabilities");
    expect(rows.length).toBeGreaterThanOrEqual(9);
    for (const [capability, , page, folder] of rows) {
      const pageTarget = /\]\(([^)]+)\)/.exec(page ?? "")?.[1];
      const folderTarget = /\]\(([^)]+)\)/.exec(folder ?? "")?.[1];
      expect(pageTarget, `${capability}: docs page`).toMatch(/^docs\/.+\.md$/);
      expect(pages[pageTarget ?? ""], `${capability}: ${pageTarget}`).toBeDefined();
      expect(folderTarget !== undefined && exists(folderTarget), `${capability}: ${folderTarget}`).toBe(true);
    }
  });
});

describe("configuration reference", () => {
  // The source of truth is the Env interface of src/env.ts: the Worker and both Durable Objects read their
  // configuration through it, and tsc refuses a read of a name it does not declare. The page must list exactly its
  // names. Secrets an agent's definition names (a hook's secret, llmConfig.api_key, MCP headers) are read by that
  // name, not through Env: the page lists them in rows marked "(any name)", which are left out here.
  /** The page's table, name → kind, without the "(any name)" rows. */
  function documented(): Map<string, string> {
    const page = docsPages["docs/reference/configuration.md"] ?? "";
    const rows = tableAfter(page, "| name ").filter(([name]) => !(name ?? "").includes("(any name)"));
    return new Map(rows.map(([name, kind]) => [(name ?? "").replace(/`/g, ""), kind ?? ""]));
  }
  const body = envSource.slice(envSource.indexOf("export interface Env {"));
  const declared = [...body.slice(0, body.indexOf("\n}")).matchAll(/^ {2}([A-Z][A-Z0-9_]*)\??:/gm)].map(
    (m) => m[1] ?? "",
  );

  it("lists exactly the names src/env.ts declares", () => {
    expect(declared.length).toBeGreaterThanOrEqual(10);
    expect([...documented().keys()].sort()).toEqual([...declared].sort());
  });

  it("declares only names the code reads", () => {
    const code = Object.entries(sources)
      .filter(([path]) => path !== "src/env.ts")
      .map(([, text]) => text)
      .join("\n");
    expect(declared.filter((name) => !new RegExp(`\\b${name}\\b`).test(code))).toEqual([]);
  });

  it("agrees with wrangler.toml's bindings and [vars], kind by kind", () => {
    const vars = wranglerToml.slice(wranglerToml.indexOf("[vars]")).split("\n[")[0] ?? "";
    const expected: [string, string][] = [
      ...[...vars.matchAll(/^([A-Z][A-Z0-9_]*)\s*=/gm)].map((m): [string, string] => [m[1] ?? "", "var"]),
      ...[...wranglerToml.matchAll(/\[\[durable_objects\.bindings\]\]\s*\nname = "([A-Z_]+)"/g)].map(
        (m): [string, string] => [m[1] ?? "", "Durable Object binding"],
      ),
      ...[...wranglerToml.matchAll(/\[\[r2_buckets\]\]\s*\nbinding = "([A-Z_]+)"/g)].map((m): [string, string] => [
        m[1] ?? "",
        "R2 binding",
      ]),
    ];
    expect(expected.length).toBeGreaterThanOrEqual(5);
    const table = documented();
    for (const [name, kind] of expected) expect([name, table.get(name)]).toEqual([name, kind]);
  });

  it("marks as var exactly what the redactor does not treat as a secret", () => {
    // redaction.md says every name of the environment that is not a var of this table is redacted as a secret.
    const list = redactionSource.slice(redactionSource.indexOf("const NOT_SECRET"));
    const notSecret = [...list.slice(0, list.indexOf("]);")).matchAll(/"([A-Z][A-Z0-9_]*)"/g)].map((m) => m[1]);
    const vars = [...documented()].filter(([, kind]) => kind === "var").map(([name]) => name);
    expect(notSecret.length).toBeGreaterThanOrEqual(5);
    expect([...vars].sort()).toEqual([...notSecret].sort());
  });
});
