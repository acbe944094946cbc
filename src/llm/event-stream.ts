// The AWS event stream (application/vnd.amazon.eventstream), the framing of Amazon Bedrock's streamed responses,
// decoded: each message is a prelude (total length, headers length, the prelude's CRC32), headers (name, type 7 =
// string, value), a payload and the message's CRC32, all big-endian. Both checksums are checked, so a damaged
// stream is an error rather than a wrong event.

export interface EventStreamMessage {
  headers: Record<string, string>;
  payload: Uint8Array;
}

/** A damaged stream: the SDK reports it as a response that is not what the API sends. */
export class EventStreamError extends SyntaxError {}

const PRELUDE_BYTES = 12;
/** Far above Bedrock's chunks; a length beyond it is a damaged prelude, not a message to wait for. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

/** The messages of a byte stream, as each completes. */
export async function* decodeEventStream(body: ReadableStream<Uint8Array>): AsyncGenerator<EventStreamMessage> {
  let buffer = new Uint8Array(0);
  const reader = body.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (value) buffer = concat(buffer, value);
      for (;;) {
        if (buffer.length < PRELUDE_BYTES) break;
        const view = new DataView(buffer.buffer, buffer.byteOffset, buffer.byteLength);
        const total = view.getUint32(0);
        if (crc32(buffer.subarray(0, 8)) !== view.getUint32(8) || total < 16 || total > MAX_MESSAGE_BYTES) {
          throw new EventStreamError("Bedrock's event stream has a damaged message prelude");
        }
        if (buffer.length < total) break;
        yield parseMessage(buffer.subarray(0, total));
        buffer = buffer.slice(total);
      }
      if (done) break;
    }
    if (buffer.length > 0) throw new EventStreamError("Bedrock's event stream ended inside a message");
  } finally {
    reader.releaseLock();
  }
}

function parseMessage(bytes: Uint8Array): EventStreamMessage {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const total = bytes.length;
  if (crc32(bytes.subarray(0, total - 4)) !== view.getUint32(total - 4)) {
    throw new EventStreamError("Bedrock's event stream has a message whose checksum does not match");
  }
  const headersEnd = PRELUDE_BYTES + view.getUint32(4);
  const headers: Record<string, string> = {};
  const decoder = new TextDecoder();
  let at = PRELUDE_BYTES;
  while (at < headersEnd) {
    const nameLength = view.getUint8(at);
    const name = decoder.decode(bytes.subarray(at + 1, at + 1 + nameLength));
    at += 1 + nameLength;
    const type = view.getUint8(at);
    // Bedrock's headers are strings (type 7); any other type would mean a stream this decoder was not written for.
    if (type !== 7) throw new EventStreamError(`Bedrock's event stream has a header of type ${type}`);
    const length = view.getUint16(at + 1);
    headers[name] = decoder.decode(bytes.subarray(at + 3, at + 3 + length));
    at += 3 + length;
  }
  return { headers, payload: bytes.subarray(headersEnd, total - 4) };
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array<ArrayBuffer> {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
}

const CRC_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32 (IEEE 802.3), the event stream's checksum. */
export function crc32(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = (CRC_TABLE[(crc ^ byte) & 0xff] ?? 0) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
