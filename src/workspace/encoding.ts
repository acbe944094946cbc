// File content between text and bytes in the Node encodings just-bash names (utf-8, latin1/binary/ascii, base64,
// hex), without Node's Buffer: the workspace stores bytes, and tools and the shell read and write text.
import type { BufferEncoding } from "just-bash";

/** The encoding a just-bash call names, as a string argument or an `encoding` option. */
export function encodingOf(options: unknown): BufferEncoding | undefined {
  if (typeof options === "string") return options as BufferEncoding;
  if (options && typeof options === "object" && "encoding" in options) {
    const encoding = (options as { encoding?: unknown }).encoding;
    return typeof encoding === "string" ? (encoding as BufferEncoding) : undefined;
  }
  return undefined;
}

/** Text as bytes in a Node encoding (utf-8 unless named); bytes pass as they are. */
export function encode(content: string | Uint8Array, encoding?: BufferEncoding): Uint8Array {
  if (typeof content !== "string") return content;
  switch (encoding) {
    case "binary":
    case "latin1":
    case "ascii":
      return Uint8Array.from(content, (ch) => ch.charCodeAt(0) & 0xff);
    case "base64":
      return Uint8Array.from(atob(content), (ch) => ch.charCodeAt(0));
    case "hex": {
      const bytes = new Uint8Array(content.length >> 1);
      for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(content.slice(i * 2, i * 2 + 2), 16);
      return bytes;
    }
    default:
      return new TextEncoder().encode(content);
  }
}

/** Bytes as text in a Node encoding (utf-8 unless named). */
export function decode(bytes: Uint8Array, encoding?: BufferEncoding | null): string {
  switch (encoding) {
    case "binary":
    case "latin1":
    case "ascii": {
      let out = "";
      for (let i = 0; i < bytes.length; i += 8192) out += String.fromCharCode(...bytes.subarray(i, i + 8192));
      return out;
    }
    case "base64": {
      let raw = "";
      for (let i = 0; i < bytes.length; i += 8192) raw += String.fromCharCode(...bytes.subarray(i, i + 8192));
      return btoa(raw);
    }
    case "hex":
      return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    default:
      return new TextDecoder().decode(bytes);
  }
}
