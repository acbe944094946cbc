// The README stays true to the code: its event table lists exactly the event vocabulary.
import { describe, expect, it } from "vitest";
import readme from "../README.md?raw";
import { EVENT_TYPES } from "../src/events/event-record.ts";

describe("README", () => {
  it("documents every event type in the vocabulary, and no other", () => {
    const section = readme.slice(readme.indexOf("### Events"), readme.indexOf("### Run bundle"));
    const documented = section
      .split("\n")
      .filter((line) => line.startsWith("| `"))
      .flatMap((line) => [...(line.split("|")[1] ?? "").matchAll(/`([a-z_]+)`/g)].map((m) => m[1]));
    expect(new Set(documented)).toEqual(new Set(EVENT_TYPES));
  });
});
