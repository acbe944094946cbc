// The AWS event stream (application/vnd.amazon.eventstream) that Amazon Bedrock streams in, encoded: per message a
// prelude (total length, headers length, CRC32 of both), string headers, the payload and the CRC32 of everything
// before it, big-endian. Node's zlib has the CRC32.
import { crc32 } from "node:zlib";

export function eventStreamMessage(headers: Record<string, string>, payload: Uint8Array): Buffer {
  const headerBytes = Buffer.concat(
    Object.entries(headers).map(([name, value]) => {
      const n = Buffer.from(name, "utf8");
      const v = Buffer.from(value, "utf8");
      const head = Buffer.alloc(1 + n.length + 3);
      head.writeUInt8(n.length, 0);
      n.copy(head, 1);
      head.writeUInt8(7, 1 + n.length); // 7: a string value
      head.writeUInt16BE(v.length, 2 + n.length);
      return Buffer.concat([head, v]);
    }),
  );
  const total = 12 + headerBytes.length + payload.length + 4;
  const message = Buffer.alloc(total);
  message.writeUInt32BE(total, 0);
  message.writeUInt32BE(headerBytes.length, 4);
  message.writeUInt32BE(crc32(message.subarray(0, 8)), 8);
  headerBytes.copy(message, 12);
  Buffer.from(payload).copy(message, 12 + headerBytes.length);
  message.writeUInt32BE(crc32(message.subarray(0, total - 4)), total - 4);
  return message;
}

/** A chunk event carrying one Messages API stream event, as Bedrock sends them. */
export function chunkMessage(event: unknown): Buffer {
  const bytes = Buffer.from(JSON.stringify(event), "utf8").toString("base64");
  return eventStreamMessage(
    { ":event-type": "chunk", ":content-type": "application/json", ":message-type": "event" },
    Buffer.from(JSON.stringify({ bytes }), "utf8"),
  );
}

/** An exception message, which ends a Bedrock stream. */
export function exceptionMessage(exception: string, message: string): Buffer {
  return eventStreamMessage(
    { ":exception-type": exception, ":content-type": "application/json", ":message-type": "exception" },
    Buffer.from(JSON.stringify({ message }), "utf8"),
  );
}
