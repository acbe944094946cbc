// What a tenant may not say at runtime because only the deployment's operator may: a model or embeddings endpoint
// (it would receive the deployment's key) and the names of the Worker's secrets. PUT /v1/agents/:name (a tenant's own
// agent) and PUT /v1/collections/:name/documents (a collection's embedding provider) refuse them with the same checks
// and the same 400, naming the field.
import { ApiError } from "../errors.ts";

/** One setting checked: whether the request gives it, its field, and why it is refused. */
export type SettingRefusal = readonly [given: boolean, field: string, why: string];

/**
 * The `endpoint` and `api_key` of a provider at `field` (an agent's model, its grader, an embedding provider), which
 * only the deployment's own files may give; `kind` names what the endpoint serves.
 */
export function endpointAndKeyRefusals(
  spec: { endpoint?: unknown; api_key?: unknown } | null | undefined,
  field: string,
  kind: "model" | "embeddings",
): SettingRefusal[] {
  return [
    [spec?.endpoint !== undefined, `${field}.endpoint`, `another ${kind} endpoint would receive the deployment's key`],
    [spec?.api_key !== undefined, `${field}.api_key`, "the deployment's secrets are named in agents/ files only"],
  ];
}

/** Throws 400 validation_failed naming the first setting given; `where` says what the request is ("a request"). */
export function refuseDeploymentSettings(refusals: readonly SettingRefusal[], where: string): void {
  const refused = refusals.find(([given]) => given);
  if (refused) {
    throw new ApiError("validation_failed", `Invalid ${refused[1]}: not for ${where}; ${refused[2]}.`, refused[1]);
  }
}
