// The run bundle's archive format (src/run-bundle/tar.ts): what packTar writes, readTar finds again at the offsets
// packTar reported, whatever the paths; the header fields follow POSIX ustar byte for byte, so any tar reads it.
// (test/e2e/bundle-download.test.ts reads a downloaded bundle with the system's own tar.)
import { describe, expect, it } from "vitest";
import { END_OF_ARCHIVE, entryFraming, filesEnd, packTar, readTar } from "../../src/run-bundle/tar.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const MTIME = Date.UTC(2026, 10, 24, 12, 0, 0);

function file(path: string, text: string) {
  return { path, content: encoder.encode(text), mtimeMs: MTIME };
}

function field(block: Uint8Array, at: number, length: number): string {
  const bytes = block.subarray(at, at + length);
  const end = bytes.indexOf(0);
  return decoder.decode(end === -1 ? bytes : bytes.subarray(0, end));
}

describe("the run bundle's tar archive", () => {
  it("puts each file after its header at the offset it reports, padded to 512 bytes, ending with two zero blocks", () => {
    const { archive, entries } = packTar([file("bundle.json", "{}\n"), file("events.jsonl", "x".repeat(700))]);
    expect(entries).toEqual([
      { path: "bundle.json", offset: 512, size: 3 },
      { path: "events.jsonl", offset: 1536, size: 700 },
    ]);
    expect(archive.byteLength).toBe(1536 + 1024 + END_OF_ARCHIVE);
    expect(decoder.decode(archive.subarray(1536, 1536 + 700))).toBe("x".repeat(700));
    expect(archive.subarray(1536 + 700).every((byte) => byte === 0)).toBe(true);
    expect(filesEnd(entries)).toBe(1536 + 1024);
  });

  it("writes ustar header fields: name, mode, size and mtime in octal, type 0, magic, and a checksum that adds up", () => {
    const { archive } = packTar([file("final_summary.md", "# Task\n")]);
    const header = archive.subarray(0, 512);
    expect(field(header, 0, 100)).toBe("final_summary.md");
    expect(field(header, 100, 8)).toBe("0000644");
    expect(field(header, 124, 12)).toBe("00000000007");
    expect(Number.parseInt(field(header, 136, 12), 8)).toBe(MTIME / 1000);
    expect(field(header, 156, 1)).toBe("0");
    expect(field(header, 257, 6)).toBe("ustar");
    expect(field(header, 263, 2)).toBe("00");
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 32 : (header[i] as number);
    expect(Number.parseInt(field(header, 148, 8).trim(), 8)).toBe(sum);
  });

  it("reads back every path: long ones split into ustar's prefix, longer ones in a pax header, and non-ASCII ones", () => {
    const split = `artifacts/${"d".repeat(120)}/${"f".repeat(90)}.txt`;
    const unsplittable = `artifacts/${"g".repeat(130)}.txt`;
    const unicode = "artifacts/résumé-日本.txt";
    const files = [file(split, "one"), file(unsplittable, "two"), file(unicode, "three"), file("empty.txt", "")];
    const { archive, entries } = packTar(files);
    expect(readTar(archive)).toEqual(entries);
    expect(entries.map((entry) => entry.path)).toEqual([split, unsplittable, unicode, "empty.txt"]);
    for (const [i, entry] of entries.entries()) {
      expect(archive.subarray(entry.offset, entry.offset + entry.size)).toEqual(files[i]?.content);
    }
    // The split path's own header holds it in two fields, with no pax header before it.
    expect(field(archive, 345, 155)).toBe(`artifacts/${"d".repeat(120)}`);
    expect(field(archive, 0, 100)).toBe(`${"f".repeat(90)}.txt`);
  });

  it("frames a file written a piece at a time exactly as packTar frames it", () => {
    const path = `artifacts/${"h".repeat(200)}.txt`;
    const content = encoder.encode("streamed");
    const packed = packTar([{ path, content, mtimeMs: MTIME }]).archive;
    const { header, padding } = entryFraming(path, content.byteLength, MTIME);
    const pieces = new Uint8Array(header.byteLength + content.byteLength + padding + END_OF_ARCHIVE);
    pieces.set(header, 0);
    pieces.set(content, header.byteLength);
    expect(pieces).toEqual(packed);
  });

  it("refuses bytes that are not an archive", () => {
    const bogus = new Uint8Array(1024).fill(65);
    expect(() => readTar(bogus)).toThrow("Not a tar archive: bad checksum at 0.");
  });
});
