// What a failed request throws: Outpost's error body (docs/reference/errors.md) as a typed error, so a caller can
// branch on `code` (stable) rather than on messages or statuses.

/** Outpost's error answer: { error: { code, message, request_id, field?, … } }. */
export interface ErrorBody {
  error: {
    code: string;
    message: string;
    request_id?: string;
    field?: string;
    [member: string]: unknown;
  };
}

/** A non-2xx answer from Outpost. `code` is the registry's stable code; `body` has the members some codes add. */
export class OutpostError extends Error {
  override readonly name = "OutpostError";
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  readonly requestId: string | undefined;
  readonly body: unknown;

  constructor(
    status: number,
    code: string,
    message: string,
    options: { field?: string; requestId?: string; body?: unknown } = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = options.field;
    this.requestId = options.requestId;
    this.body = options.body;
  }

  /** The error a response carries: Outpost's body when it has one, else a description of what came back. */
  static async from(response: Response): Promise<OutpostError> {
    const text = await response.text().catch(() => "");
    let body: unknown = text;
    try {
      body = JSON.parse(text);
    } catch {
      // not JSON: a proxy's page, an empty body
    }
    return OutpostError.fromBody(response, body);
  }

  /** The error of a response whose body has been read already (`body`: parsed JSON, or the text). */
  static fromBody(response: Response, body: unknown): OutpostError {
    const requestId = response.headers.get("x-request-id") ?? undefined;
    if (isErrorBody(body)) {
      const { code, message, field, request_id } = body.error;
      const id = request_id ?? requestId;
      return new OutpostError(response.status, code, message, {
        ...(field !== undefined ? { field } : {}),
        ...(id !== undefined ? { requestId: id } : {}),
        body,
      });
    }
    const snippet = (typeof body === "string" ? body : JSON.stringify(body ?? "")).slice(0, 200).trim();
    return new OutpostError(
      response.status,
      "unexpected_response",
      `HTTP ${response.status}${snippet ? `: ${snippet}` : ""}`,
      { ...(requestId !== undefined ? { requestId } : {}), body },
    );
  }
}

/** Raised by wait() when the task has not ended (or asked for input) within the time given. */
export class OutpostTimeoutError extends Error {
  override readonly name = "OutpostTimeoutError";
}

function isErrorBody(value: unknown): value is ErrorBody {
  if (typeof value !== "object" || value === null || !("error" in value)) return false;
  const error = (value as { error: unknown }).error;
  return (
    typeof error === "object" &&
    error !== null &&
    typeof (error as { code?: unknown }).code === "string" &&
    typeof (error as { message?: unknown }).message === "string"
  );
}
