// AWS Signature Version 4 with WebCrypto: what Amazon Bedrock requires of every request. Follows the published
// algorithm (canonical request → string to sign → a key derived from the secret per day, region and service) as
// @smithy/signature-v4 implements it for services other than S3: the path is URI-encoded once more, the payload hash
// is signed and sent as x-amz-content-sha256.

export interface AwsCredentials {
  accessKeyId: string;
  secretAccessKey: string;
  sessionToken?: string | undefined;
}

export interface SignInput {
  method: string;
  url: URL;
  /** Headers to send; those signed are host, content-type and every x-amz-* (set here). */
  headers: Headers;
  body: string;
  region: string;
  service: string;
  credentials: AwsCredentials;
  /** Signing time; now by default. */
  now?: Date;
}

const encoder = new TextEncoder();

/** Adds x-amz-date, x-amz-content-sha256, x-amz-security-token (temporary credentials) and Authorization. */
export async function signRequest(input: SignInput): Promise<void> {
  const { headers, credentials } = input;
  const amzDate = (input.now ?? new Date())
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
  const day = amzDate.slice(0, 8);
  const payloadHash = hex(await crypto.subtle.digest("SHA-256", encoder.encode(input.body)));
  headers.set("x-amz-date", amzDate);
  headers.set("x-amz-content-sha256", payloadHash);
  if (credentials.sessionToken) headers.set("x-amz-security-token", credentials.sessionToken);
  const signed = new Map<string, string>([["host", input.url.host]]);
  for (const [name, value] of headers) {
    if (name === "content-type" || name.startsWith("x-amz-")) signed.set(name, value.trim().replace(/\s+/g, " "));
  }
  const names = [...signed.keys()].sort();
  const canonical = [
    input.method.toUpperCase(),
    canonicalPath(input.url.pathname),
    canonicalQuery(input.url.searchParams),
    names.map((name) => `${name}:${signed.get(name)}\n`).join(""),
    names.join(";"),
    payloadHash,
  ].join("\n");
  const scope = `${day}/${input.region}/${input.service}/aws4_request`;
  const toSign = [
    "AWS4-HMAC-SHA256",
    amzDate,
    scope,
    hex(await crypto.subtle.digest("SHA-256", encoder.encode(canonical))),
  ].join("\n");
  let key = await hmac(encoder.encode(`AWS4${credentials.secretAccessKey}`), day);
  for (const part of [input.region, input.service, "aws4_request"]) key = await hmac(key, part);
  const signature = hex(await hmac(key, toSign));
  headers.set(
    "authorization",
    `AWS4-HMAC-SHA256 Credential=${credentials.accessKeyId}/${scope}, SignedHeaders=${names.join(";")}, Signature=${signature}`,
  );
}

/** RFC 3986 encoding, as SigV4 wants it: encodeURIComponent plus !'()*. */
function uriEncode(text: string): string {
  return encodeURIComponent(text).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/** Each segment of the path as sent (already encoded) encoded again: SigV4 for every service but S3. */
function canonicalPath(path: string): string {
  return path.split("/").map(uriEncode).join("/");
}

function canonicalQuery(params: URLSearchParams): string {
  return [...params]
    .map(([k, v]) => [uriEncode(k), uriEncode(v)] as const)
    .sort(([a, x], [b, y]) => (a < b ? -1 : a > b ? 1 : x < y ? -1 : x > y ? 1 : 0))
    .map(([k, v]) => `${k}=${v}`)
    .join("&");
}

async function hmac(key: Uint8Array | ArrayBuffer, data: string): Promise<ArrayBuffer> {
  const imported = await crypto.subtle.importKey("raw", key, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  return crypto.subtle.sign("HMAC", imported, encoder.encode(data));
}

function hex(buffer: ArrayBuffer): string {
  return Array.from(new Uint8Array(buffer), (b) => b.toString(16).padStart(2, "0")).join("");
}
