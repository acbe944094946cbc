// The tail every generator in scripts/ shares: write the generated text when it changed, or with `--check` fail when
// the file on disk is out of date instead of writing it (CI and the tests check that nothing was left unbuilt).
import { existsSync, readFileSync, writeFileSync } from "node:fs";

export function writeGenerated(path: string, text: string, messages: { outOfDate: string; written: string }): void {
  const current = existsSync(path) ? readFileSync(path, "utf8") : "";
  if (current === text) return;
  if (process.argv.includes("--check")) {
    console.error(messages.outOfDate);
    process.exit(1);
  }
  writeFileSync(path, text);
  console.log(messages.written);
}
