// Google's OAuth token endpoint for service accounts (RFC 7523 JWT bearer grant), as Vertex AI's callers reach it: a
// JWT signed (RS256) with the account's key is exchanged for an access token. The emulator makes a test service
// account at start (its JSON key, with token_uri pointing here, is what a test Worker gets as a secret) and a second
// one with the same email but a key Google never saw, so a test can see the refusal. Issued tokens are what the
// Vertex endpoint (vertex.ts) accepts.
import { createPublicKey, generateKeyPairSync, type KeyObject, randomUUID, verify } from "node:crypto";

export const TOKEN_PATH = "/token";
const EMAIL = "outpost-test@emulator-project.iam.gserviceaccount.com";
const PROJECT = "emulator-project";
const SCOPE = "https://www.googleapis.com/auth/cloud-platform";

export interface IssuedToken {
  /** A stable id of the token, for stats (the token itself stays out of them). */
  id: string;
  email: string;
  expiresAt: number;
}

function serviceAccount(tokenUri: string, keyId: string): { json: string; publicKey: KeyObject } {
  const { privateKey, publicKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
  const json = JSON.stringify({
    type: "service_account",
    project_id: PROJECT,
    private_key_id: keyId,
    private_key: pem,
    client_email: EMAIL,
    token_uri: tokenUri,
  });
  return { json, publicKey: createPublicKey(publicKey.export({ type: "spki", format: "pem" })) };
}

export class GoogleTokenEndpoint {
  /** The JSON key of the account this endpoint knows, and of one whose key it does not. */
  readonly serviceAccounts: { known: string; unknown: string };
  private readonly publicKey: KeyObject;
  private readonly tokenUri: string;
  private readonly issued = new Map<string, IssuedToken>();

  constructor(baseUrl: string) {
    this.tokenUri = `${baseUrl}${TOKEN_PATH}`;
    const known = serviceAccount(this.tokenUri, "emulator-key-1");
    this.publicKey = known.publicKey;
    this.serviceAccounts = { known: known.json, unknown: serviceAccount(this.tokenUri, "emulator-key-1").json };
  }

  /** The token's record when the endpoint issued it and it has not expired. */
  lookup(token: string): IssuedToken | null {
    const found = this.issued.get(token);
    return found && found.expiresAt > Date.now() ? found : null;
  }

  /** Answers a token request: status and JSON body, as Google's endpoint would. */
  exchange(form: string): { status: number; body: Record<string, unknown> } {
    const params = new URLSearchParams(form);
    if (params.get("grant_type") !== "urn:ietf:params:oauth:grant-type:jwt-bearer") {
      return { status: 400, body: { error: "unsupported_grant_type", error_description: "Invalid grant_type." } };
    }
    const refusal = this.check(params.get("assertion") ?? "");
    if (refusal) return { status: 400, body: { error: "invalid_grant", error_description: refusal } };
    const token = `ya29.emulator-${randomUUID()}`;
    const id = `tok_${this.issued.size + 1}`;
    this.issued.set(token, { id, email: EMAIL, expiresAt: Date.now() + 3600_000 });
    return { status: 200, body: { access_token: token, expires_in: 3599, token_type: "Bearer" } };
  }

  /** Null when the assertion is good; else Google's reason. */
  private check(assertion: string): string | null {
    const [header, claims, signature] = assertion.split(".");
    if (header === undefined || claims === undefined || signature === undefined) return "Invalid JWT.";
    const decode = (part: string) =>
      JSON.parse(Buffer.from(part, "base64url").toString("utf8")) as Record<string, unknown>;
    let parsedHeader: Record<string, unknown>;
    let parsedClaims: Record<string, unknown>;
    try {
      parsedHeader = decode(header);
      parsedClaims = decode(claims);
    } catch {
      return "Invalid JWT.";
    }
    if (parsedHeader.alg !== "RS256") return "Invalid JWT: alg must be RS256.";
    const signed = verify(
      "RSA-SHA256",
      Buffer.from(`${header}.${claims}`),
      this.publicKey,
      Buffer.from(signature, "base64url"),
    );
    if (!signed) return "Invalid JWT Signature.";
    const now = Date.now() / 1000;
    if (parsedClaims.iss !== EMAIL) return "Invalid JWT: unknown issuer.";
    if (parsedClaims.aud !== this.tokenUri) return "Invalid JWT: aud must be the token endpoint.";
    if (parsedClaims.scope !== SCOPE) return "Invalid JWT: scope.";
    if (typeof parsedClaims.exp !== "number" || parsedClaims.exp < now)
      return "Invalid JWT: Token must be a short-lived token.";
    if (typeof parsedClaims.iat !== "number" || parsedClaims.iat > now + 60) return "Invalid JWT: iat in the future.";
    return null;
  }
}
