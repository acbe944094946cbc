// A2A's push notification configs (A2A v1.0 §4.3) on Outpost's own (src/callbacks/push-configs.ts): a config from a
// request checked and stored on the task's object, and a stored one as A2A shows it back, its credentials never shown
// again.
import type { TaskPushNotificationConfig } from "@a2a-js/sdk";
import { MAX_PUSH_CONFIGS, PUSH_CONFIG_ID, type PushConfig } from "../callbacks/push-configs.ts";
import { invalidParams, taskNotFound } from "./errors.ts";
import type { OutpostPort, TaskStub } from "./outpost-port.ts";

/** A push config as a request gives it, checked; the task's object adds when it was set and from which event. */
export type CheckedPushConfig = Omit<PushConfig, "after_seq" | "created_at">;

/** A push config as A2A shows it: its credentials are never shown again. */
export function configView(taskId: string, config: PushConfig): TaskPushNotificationConfig {
  return {
    tenant: "",
    id: config.id,
    taskId,
    url: config.url,
    token: config.token,
    authentication: config.authentication ? { scheme: config.authentication.scheme, credentials: "" } : undefined,
  };
}

/**
 * A push config from a request, checked (its id, token, authentication, and its URL as a webhook's, after the key's
 * scopes): checked before anything is created or decided, so that a refused config leaves nothing behind.
 */
export function checkedPushConfig(
  port: Pick<OutpostPort, "pushUrl">,
  params: TaskPushNotificationConfig,
): CheckedPushConfig {
  const id = params.id || crypto.randomUUID();
  if (!PUSH_CONFIG_ID.test(id)) throw invalidParams("A push config's id is 1–64 letters, digits, '-' or '_'.", "id");
  if (!params.url) throw invalidParams("A push config needs a url.", "url");
  // Header values: printable, on one line.
  const headerSafe = (value: string) => /^[\x20-\x7e]{0,1024}$/.test(value);
  if (!headerSafe(params.token)) throw invalidParams("token is at most 1024 printable ASCII characters.", "token");
  const auth = params.authentication?.scheme ? params.authentication : undefined;
  if (auth && (!/^[A-Za-z][\w.-]{0,31}$/.test(auth.scheme) || !headerSafe(auth.credentials))) {
    throw invalidParams(
      "authentication is {scheme, credentials}: a scheme name (e.g. Bearer) and printable ASCII credentials.",
      "authentication",
    );
  }
  return {
    id,
    url: port.pushUrl(params.url),
    token: params.token,
    authentication: auth ? { scheme: auth.scheme, credentials: auth.credentials } : null,
  };
}

/**
 * Stores a checked push config on the task, as A2A shows it back. `fromStart`: the config came with the message that
 * started the task, so it hears of every moment of it.
 */
export async function storePushConfig(
  stub: TaskStub,
  taskId: string,
  config: CheckedPushConfig,
  fromStart: boolean,
): Promise<TaskPushNotificationConfig> {
  const put = await stub.putPushConfig(config, fromStart);
  if (put === null) throw taskNotFound(taskId);
  if (put === "full") throw invalidParams(`A task keeps at most ${MAX_PUSH_CONFIGS} push notification configs.`, "id");
  return configView(taskId, put);
}
