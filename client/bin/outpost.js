#!/usr/bin/env node
// The `outpost` command (the client package's bin): a launcher for the CLI's TypeScript source, which Node 22.18+
// runs as is (it strips the types of files outside node_modules; the workspace link resolves to client/). An older
// Node is told what it needs instead of failing on the first type annotation.
const [major, minor] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 18)) {
  process.stderr.write(`outpost needs Node 22.18 or newer (this is ${process.versions.node}).\n`);
  process.exit(2);
}
await import("../src/cli/main.ts");
