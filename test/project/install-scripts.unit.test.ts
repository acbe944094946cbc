// `npm install` runs a dependency's install script only where package.json's `allowScripts` allows it (npm 11
// warns about any package it does not name; npm 12 skips their scripts). Three packages need theirs: `node`
// (the Node 22 binary the project runs on), `workerd` and `esbuild` (their platform binaries). Every other
// package with an install script is denied by name, so a new one shows up here instead of as a warning at
// install time, or as a missing binary under npm 12.
import { describe, expect, it } from "vitest";
import manifest from "../../package.json?raw";
import lockfile from "../../package-lock.json?raw";

const NEEDED = ["node", "workerd", "esbuild"];

const allowScripts: Record<string, boolean> = JSON.parse(manifest).allowScripts ?? {};

/** The name of every package in the lockfile that has an install script. */
function packagesWithInstallScripts(): string[] {
  const packages: Record<string, { hasInstallScript?: boolean }> = JSON.parse(lockfile).packages;
  const names = Object.entries(packages)
    .filter(([, entry]) => entry.hasInstallScript === true)
    .map(([key]) => key.slice(key.lastIndexOf("node_modules/") + "node_modules/".length));
  return [...new Set(names)].sort();
}

describe("install scripts", () => {
  it("finds the packages with install scripts in the lockfile", () => {
    expect(packagesWithInstallScripts()).toEqual(expect.arrayContaining(NEEDED));
  });

  it("names every package with an install script in allowScripts", () => {
    const unnamed = packagesWithInstallScripts().filter((name) => typeof allowScripts[name] !== "boolean");
    expect(unnamed).toEqual([]);
  });

  it("allows the scripts the project needs and no other", () => {
    const allowed = Object.entries(allowScripts)
      .filter(([, allow]) => allow)
      .map(([name]) => name)
      .sort();
    expect(allowed).toEqual([...NEEDED].sort());
  });
});
