// The client is a package of its own (client/, published as @outpost/client): it must build and run without the
// server's sources, in Node, browsers and Workers. So its modules import only each other and the packages its
// package.json declares, and no Node built-in outside the CLI.
import { describe, expect, it } from "vitest";
import clientPackage from "../../client/package.json";

const sources: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(
    import.meta.glob<string>(["../../client/src/**/*.ts"], { query: "?raw", import: "default", eager: true }),
  ).map(([key, text]) => [key.replace(/^\.\.\/\.\.\//, ""), text]),
);

const IMPORT = /^\s*(?:import|export)\s+(?:type\s+)?(?:[\w\s{},*$]*?\s+from\s+)?["']([^"']+)["']/gm;

function specifiers(text: string): string[] {
  return [...text.matchAll(IMPORT)].map((m) => m[1] ?? "");
}

describe("the client package", () => {
  it("has sources to check", () => {
    expect(Object.keys(sources)).toContain("client/src/index.ts");
  });

  it("imports nothing from outside client/ by a relative path", () => {
    const outside = Object.entries(sources).flatMap(([file, text]) =>
      specifiers(text)
        .filter((spec) => spec.startsWith("."))
        .filter((spec) => {
          const depth = file.split("/").length - 2; // folders below client/
          return spec.split("/").filter((part) => part === "..").length > depth;
        })
        .map((spec) => `${file} → ${spec}`),
    );
    expect(outside).toEqual([]);
  });

  it("imports only the packages its package.json declares, and Node built-ins only in the CLI", () => {
    const declared = new Set(Object.keys(clientPackage.dependencies));
    const wrong = Object.entries(sources).flatMap(([file, text]) =>
      specifiers(text)
        .filter((spec) => !spec.startsWith("."))
        .filter((spec) => {
          if (spec.startsWith("node:")) return !file.startsWith("client/src/cli/");
          const name = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : (spec.split("/")[0] ?? "");
          return !declared.has(name);
        })
        .map((spec) => `${file} → ${spec}`),
    );
    expect(wrong).toEqual([]);
  });
});
