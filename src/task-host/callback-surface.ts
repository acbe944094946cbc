// A task's callbacks as the RPCs see them: its deliveries with every attempt, a redelivery, and its A2A push configs
// (more targets of the same callbacks, src/callbacks/push-configs.ts). The object's class delegates to this.
import type { Delivery } from "../callbacks/delivery.ts";
import type { PushConfig } from "../callbacks/push-configs.ts";
import type { RpcResult } from "../contracts/rpc.ts";
import type { TaskHost } from "./task-host.ts";

export class CallbackSurface {
  private readonly host: TaskHost;

  constructor(host: TaskHost) {
    this.host = host;
  }

  /** The task's callback deliveries with every attempt; null for an unknown task. */
  async deliveries(): Promise<Delivery[] | null> {
    return this.host.task() ? this.host.callbacks.list() : null;
  }

  /** Sends a delivery again now. */
  async redeliver(deliveryId: string): Promise<RpcResult<Delivery, "task_not_found" | "delivery_not_found">> {
    const { host } = this;
    if (!host.task()) return { ok: false, error: { code: "task_not_found", message: "No such task." } };
    if (!host.callbacks.redeliver(deliveryId)) {
      return { ok: false, error: { code: "delivery_not_found", message: `No delivery "${deliveryId}".` } };
    }
    await host.supervisor.armOutbox();
    const delivery = host.callbacks.list().find((d) => d.id === deliveryId);
    if (!delivery) return { ok: false, error: { code: "delivery_not_found", message: `No delivery "${deliveryId}".` } };
    return { ok: true, value: delivery };
  }

  /** The task's push configs; null for an unknown task. */
  async pushConfigList(): Promise<PushConfig[] | null> {
    return this.host.task() ? this.host.pushConfigs.list() : null;
  }

  /**
   * Sets a push config (replacing one with its id): told of the moments after now, or with `fromStart` of every moment
   * of the task (a config sent with the message that started it). "full" when the task has too many; null for an
   * unknown task.
   */
  async putPushConfig(
    config: Omit<PushConfig, "after_seq" | "created_at">,
    fromStart: boolean,
  ): Promise<PushConfig | "full" | null> {
    const { host } = this;
    if (!host.task()) return null;
    const after_seq = fromStart ? 0 : host.events.lastSeq();
    const put = host.pushConfigs.put({ ...config, after_seq, created_at: new Date().toISOString() });
    // A moment the config is to hear of may be past already (fromStart): its delivery is made now.
    if (put !== "full") await host.supervisor.armOutbox();
    return put;
  }

  /** Removes a push config; what it was not sent yet is not sent. Returns whether there was one (null: no task). */
  async deletePushConfig(id: string): Promise<boolean | null> {
    const { host } = this;
    if (!host.task()) return null;
    const deleted = host.pushConfigs.delete(id);
    if (deleted) host.callbacks.dropPending(id);
    return deleted;
  }
}
