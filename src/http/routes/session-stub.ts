// The session's object as the API finds it: the object a request's session id names (404 for a malformed or unknown
// id, without touching storage), for the session routes and the file routes under /v1/sessions/:id.
import type { Context } from "hono";
import { ApiError } from "../../errors.ts";
import { taskStubFor } from "../../tasks/task-ids.ts";
import type { AppEnv } from "../app-env.ts";
import { TaskIdParam } from "../schemas.ts";

/** The stub of the session's object (`raw`: the route's :id unless given); a malformed id is answered like an unknown one, without touching storage. */
export function sessionStub(c: Context<AppEnv>, raw: string = c.req.param("id") ?? "") {
  if (!TaskIdParam.safeParse(raw).success) throw sessionNotFound(raw);
  // The tenant is part of the object's name: another tenant's session id reaches an empty object (404).
  return { id: raw, stub: taskStubFor(c.env, c.get("tenant"), raw) };
}

export function sessionNotFound(id: string): ApiError {
  return new ApiError("session_not_found", `No session with id "${id}".`, "id");
}
