// OpenAI's embeddings endpoint in the emulator (`POST /v1/embeddings`, and Azure OpenAI's
// `/openai/deployments/<deployment>/embeddings?api-version=…`), so the official `openai` client (OpenAI and AzureOpenAI)
// runs unchanged against it and retrieval is tested end to end offline. Deterministic: a text's vector is the feature
// hashing ("the hashing trick", Weinberger et al., "Feature Hashing for Large Scale Multitask Learning", ICML 2009) of
// its lower-cased words (weight 1) and their character trigrams (weight 0.5) into a fixed dimension, each feature's
// sign from another bit of its hash, then L2-normalised: texts sharing words get a high cosine, unrelated texts near 0.

/** Dimension of the vectors when the request asks for none (text-embedding-3-small's is 1536; small keeps tests fast). */
export const DEFAULT_EMBEDDING_DIMENSIONS = 256;
const MAX_DIMENSIONS = 3072;
/** The model (or Azure deployment) the emulator answers with a 401 quoting the request's key. */
export const REJECT_KEY_MODEL = "reject-key";
/** OpenAI's limit on the inputs of one request. */
const MAX_INPUTS = 2048;

/** Whether `path` (no trailing slash, no query) is an embeddings endpoint; the Azure deployment when it is Azure's. */
export function embeddingsPath(path: string): { azureDeployment: string | null } | null {
  if (path === "/v1/embeddings" || path === "/embeddings") return { azureDeployment: null };
  const azure = /^\/openai\/deployments\/([^/]+)\/embeddings$/.exec(path);
  return azure?.[1] ? { azureDeployment: decodeURIComponent(azure[1]) } : null;
}

export type EmbeddingsAnswer = { status: number; body: Record<string, unknown> };

function invalid(message: string, param: string | null): EmbeddingsAnswer {
  return { status: 400, body: { error: { message, type: "invalid_request_error", param, code: null } } };
}

/** The answer to an embeddings request body, as OpenAI's API words it. `apiKey` is the Bearer or api-key credential. */
export function answerEmbeddings(
  body: unknown,
  apiKey: string | null,
  azureDeployment: string | null,
): EmbeddingsAnswer {
  if (!apiKey) {
    return {
      status: 401,
      body: {
        error: {
          message: "You didn't provide an API key.",
          type: "invalid_request_error",
          param: null,
          code: null,
        },
      },
    };
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return invalid("Invalid body.", null);
  const request = body as Record<string, unknown>;
  const model = typeof request.model === "string" ? request.model : azureDeployment;
  if (!model) return invalid("you must provide a model parameter", "model");
  if (model === REJECT_KEY_MODEL) {
    // As OpenAI refuses a wrong key: its message quotes the key (OpenAI's shows part of it), so a test can check
    // that a provider's error never carries the key out of Outpost.
    return {
      status: 401,
      body: {
        error: {
          message: `Incorrect API key provided: ${apiKey}. You can find your API key at https://platform.openai.com/account/api-keys.`,
          type: "invalid_request_error",
          param: null,
          code: "invalid_api_key",
        },
      },
    };
  }
  const input = request.input;
  const texts = typeof input === "string" ? [input] : Array.isArray(input) ? input : null;
  if (!texts || texts.length === 0 || texts.length > MAX_INPUTS || !texts.every((t) => typeof t === "string")) {
    return invalid(`'input' must be a string or an array of 1 to ${MAX_INPUTS} strings`, "input");
  }
  if (texts.some((t) => t === "")) return invalid("'input' cannot contain an empty string", "input");
  const dimensions = request.dimensions ?? DEFAULT_EMBEDDING_DIMENSIONS;
  if (
    typeof dimensions !== "number" ||
    !Number.isInteger(dimensions) ||
    dimensions < 1 ||
    dimensions > MAX_DIMENSIONS
  ) {
    return invalid(`'dimensions' must be an integer from 1 to ${MAX_DIMENSIONS}`, "dimensions");
  }
  const format = request.encoding_format ?? "float";
  if (format !== "float" && format !== "base64")
    return invalid("'encoding_format' must be float or base64", "encoding_format");
  let tokens = 0;
  const data = (texts as string[]).map((text, index) => {
    tokens += words(text).length;
    const vector = embedText(text, dimensions);
    return {
      object: "embedding",
      index,
      // The client asks for base64 (little-endian float32) unless told otherwise, and decodes it.
      embedding: format === "base64" ? Buffer.from(vector.buffer).toString("base64") : Array.from(vector),
    };
  });
  return { status: 200, body: { object: "list", data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } } };
}

function words(text: string): string[] {
  return text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];
}

/** 32-bit FNV-1a of a string's UTF-16 code units. */
function fnv1a(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** The hashed, signed, L2-normalised feature vector of `text`. */
export function embedText(text: string, dimensions: number): Float32Array {
  const vector = new Float32Array(dimensions);
  const add = (feature: string, weight: number) => {
    const hash = fnv1a(feature);
    const sign = fnv1a(`±${feature}`) & 1 ? 1 : -1;
    vector[hash % dimensions] = (vector[hash % dimensions] ?? 0) + sign * weight;
  };
  for (const word of words(text)) {
    add(`w:${word}`, 1);
    const padded = `^${word}$`;
    for (let i = 0; i + 3 <= padded.length; i++) add(`t:${padded.slice(i, i + 3)}`, 0.5);
  }
  let norm = 0;
  for (const value of vector) norm += value * value;
  if (norm === 0) {
    // No words at all (punctuation only): one fixed direction, still a unit vector.
    vector[0] = 1;
    return vector;
  }
  const scale = 1 / Math.sqrt(norm);
  for (let i = 0; i < dimensions; i++) vector[i] = (vector[i] ?? 0) * scale;
  return vector;
}
