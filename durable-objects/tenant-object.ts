// One Durable Object per tenant (named by the tenant): the directory of its tasks and sessions
// (src/tenants/directory.ts), which each task's object keeps up to date and GET /v1/tasks and GET /v1/sessions page
// through. One per tenant, not one for the deployment: a tenant's listings and reports never queue behind another's.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env.ts";
import { migrate } from "../src/storage/migrations.ts";
import { TENANT_MIGRATIONS } from "../src/storage/tenant-migrations.ts";
import { Directory, type DirectoryPage, type DirectoryQuery, type DirectoryReport } from "../src/tenants/directory.ts";

export class TenantObject extends DurableObject<Env> {
  private readonly directory: Directory;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, TENANT_MIGRATIONS);
    this.directory = new Directory(ctx.storage.sql);
  }

  /** A task's or session's row as its object reports it (a report older than the one held is ignored). */
  async record(report: DirectoryReport): Promise<void> {
    this.directory.record(report);
  }

  /** A task whose retention has run out leaves the directory. */
  async forget(id: string): Promise<void> {
    this.directory.forget(id);
  }

  async list(query: DirectoryQuery): Promise<DirectoryPage> {
    return this.directory.list(query);
  }
}
