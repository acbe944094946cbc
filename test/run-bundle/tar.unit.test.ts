// The run bundle's archive format (src/run-bundle/tar.ts): what packTar writes, readTar finds again at the offsets
// packTar reported, whatever the paths; the header fields follow POSIX ustar byte for byte, so any tar reads it.
// (test/e2e/bundle-download.test.ts reads a downloaded bundle with the system's own tar.)
import { describe, expect, it } from "vitest";
import { ApiError } from "../../src/errors.ts";
import { END_OF_ARCHIVE, entryFraming, filesEnd, packTar, readTar, tarFiles } from "../../src/run-bundle/tar.ts";
import { errorOf } from "../support/checks.ts";
import gnuTar from "./fixtures/gnu.tar?raw";
import posixTar from "./fixtures/posix.tar?raw";

const encoder = new TextEncoder();
const decoder = new TextDecoder();
const MTIME = Date.UTC(2026, 10, 24, 12, 0, 0);

/**
 * The files of fixtures/gnu.tar and fixtures/posix.tar, made by GNU tar 1.34 from one folder
 * (`tar --sort=name --mtime=2026-11-24 --owner=0 --group=0 --numeric-owner -cf gnu.tar -C dir .`, and the same with
 * `--format=posix --pax-option=delete=atime,delete=ctime`): all ASCII, so `?raw` imports them byte for byte.
 */
const GNU_FIXTURE_FILES = new Map([
  [`./artifacts/llm/${"n".repeat(120)}.txt`, "long name\n"],
  ["./events.jsonl", "events\n"],
  ["./task.json", '{"id": "fixture"}\n'],
]);

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

  it("refuses bytes that are not an archive with a 400 invalid_bundle naming the body", () => {
    const error = errorOf(() => readTar(new Uint8Array(1024).fill(65)));
    expect(error).toBeInstanceOf(ApiError);
    expect([(error as ApiError).code, (error as ApiError).status, (error as ApiError).field]).toEqual([
      "invalid_bundle",
      400,
      "body",
    ]);
    expect(error.message).toBe("The body is not a readable tar archive: it is not a tar archive (no valid header).");
    expect(errorOf(() => readTar(new Uint8Array(100))).message).toBe(
      "The body is not a readable tar archive: it is shorter than one 512-byte tar header.",
    );
  });

  it("refuses an archive cut short, a bad checksum past the first header, and a size that is not octal", () => {
    const { archive } = packTar([file("a.txt", "x".repeat(600)), file("b.txt", "y")]);
    expect(errorOf(() => readTar(archive.subarray(0, 1000))).message).toBe(
      "The body is not a readable tar archive: it is cut short: the entry at byte 0 declares 600 bytes.",
    );
    expect(errorOf(() => readTar(archive.subarray(0, 1536 + 100))).message).toBe(
      "The body is not a readable tar archive: it ends inside the header at byte 1536.",
    );
    const corrupt = archive.slice();
    corrupt[1536] = 0x7a;
    expect(errorOf(() => readTar(corrupt)).message).toBe(
      "The body is not a readable tar archive: bad header checksum at byte 1536.",
    );
    const base256 = archive.slice();
    base256.set([0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1], 124);
    const sum = [...base256.subarray(0, 512)].reduce((s, b, i) => s + (i >= 148 && i < 156 ? 32 : b), 0);
    base256.set(encoder.encode(`${sum.toString(8).padStart(6, "0")}\0 `), 148);
    expect(errorOf(() => readTar(base256)).message).toBe(
      "The body is not a readable tar archive: the header at byte 0 has no octal size.",
    );
  });

  it("reads an archive without its end-of-archive blocks to its last file", () => {
    const { archive, entries } = packTar([file("a.txt", "one")]);
    expect(readTar(archive.subarray(0, archive.byteLength - END_OF_ARCHIVE))).toEqual(entries);
  });

  it("reads what GNU tar wrote: a folder entry, ./ paths, a GNU long name, and a pax path (fixture)", () => {
    const archive = encoder.encode(gnuTar);
    const files = tarFiles(archive);
    expect([...files.keys()]).toEqual([...GNU_FIXTURE_FILES.keys()]);
    for (const [path, text] of GNU_FIXTURE_FILES) expect(decoder.decode(files.get(path))).toBe(text);
    const posix = tarFiles(encoder.encode(posixTar));
    expect([...posix.keys()]).toEqual([...GNU_FIXTURE_FILES.keys()]);
    for (const [path, text] of GNU_FIXTURE_FILES) expect(decoder.decode(posix.get(path))).toBe(text);
  });
});
