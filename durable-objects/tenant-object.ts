// One Durable Object per tenant (named by the tenant): the directory of its tasks and sessions
// (src/tenants/directory.ts), which each task's object keeps up to date and GET /v1/tasks and GET /v1/sessions page
// through, the directory of its schedules (src/tenants/schedule-directory.ts, kept by each schedule's object) and of its evaluations (src/tenants/evaluation-directory.ts, kept by each evaluation's object), and the tenant's own agents with every version (src/tenants/agent-versions.ts, PUT /v1/agents/:name). One
// per tenant, not one for the deployment: a tenant's listings, reports and agents never queue behind another's.
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env.ts";
import { migrate } from "../src/storage/migrations.ts";
import { TENANT_MIGRATIONS } from "../src/storage/tenant-migrations.ts";
import {
  type AgentIndexEntry,
  type AgentVersionSummary,
  AgentVersions,
  type PutAgentOutcome,
  type RuntimeAgentLimits,
  type StoredAgent,
} from "../src/tenants/agent-versions.ts";
import { Directory, type DirectoryPage, type DirectoryQuery, type DirectoryReport } from "../src/tenants/directory.ts";
import {
  EvaluationDirectory,
  type EvaluationEntry,
  type EvaluationPage,
  type EvaluationQuery,
} from "../src/tenants/evaluation-directory.ts";
import {
  ScheduleDirectory,
  type ScheduleEntry,
  type SchedulePage,
  type ScheduleQuery,
} from "../src/tenants/schedule-directory.ts";

export class TenantObject extends DurableObject<Env> {
  private readonly directory: Directory;
  private readonly agents: AgentVersions;
  private readonly schedules: ScheduleDirectory;
  private readonly evaluations: EvaluationDirectory;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, TENANT_MIGRATIONS);
    this.directory = new Directory(ctx.storage.sql);
    this.agents = new AgentVersions(ctx.storage.sql);
    this.schedules = new ScheduleDirectory(ctx.storage.sql);
    this.evaluations = new EvaluationDirectory(ctx.storage.sql);
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

  /**
   * Adds a version of one of the tenant's agents (checked by the Worker), unless it is the current one again, within
   * the deployment's caps (the Worker reads them: runtimeAgentLimits). Its sub-agents are checked again as it is
   * written, over the versions stored now and `workerSubagents` (the sub-agents of each of the Worker's agents the
   * tenant may see, by name): the Worker's check read the versions before this write, and two PUTs at once (a → b,
   * b → a) each passed it. AgentVersions.put awaits nothing between that check and the write.
   */
  async putAgent(
    agent: Omit<StoredAgent, "version" | "created_at"> & { source: string },
    ifMatch: number | null,
    limits: RuntimeAgentLimits,
    workerSubagents: Readonly<Record<string, readonly string[]>> = {},
  ): Promise<PutAgentOutcome> {
    return this.agents.put(agent, ifMatch, limits, workerSubagents);
  }

  /** The current version of the tenant's agent of that name, or null. */
  async agent(name: string): Promise<StoredAgent | null> {
    return this.agents.current(name);
  }

  /** One version of the tenant's agent of that name, or null. */
  async agentAt(name: string, version: number): Promise<StoredAgent | null> {
    return this.agents.at(name, version);
  }

  /** The current version of each of the tenant's agents. */
  async agentList(): Promise<StoredAgent[]> {
    return this.agents.list();
  }

  /** Which version of each of the tenant's agents is current, without the definitions. */
  async agentIndex(): Promise<AgentIndexEntry[]> {
    return this.agents.index();
  }

  async agentVersions(name: string): Promise<AgentVersionSummary[]> {
    return this.agents.versions(name);
  }

  /** A schedule's row as its object reports it (a report older than the one held is ignored). */
  async recordSchedule(entry: ScheduleEntry, version: number): Promise<void> {
    this.schedules.record(entry, version);
  }

  /** A deleted schedule leaves the directory. */
  async forgetSchedule(id: string): Promise<void> {
    this.schedules.forget(id);
  }

  /** The tenant's schedules that may fire, but `except` (OUTPOST_MAX_SCHEDULES_PER_TENANT bounds them). */
  async countSchedules(except: string): Promise<number> {
    return this.schedules.countThatMayFire(except);
  }

  async listSchedules(query: ScheduleQuery): Promise<SchedulePage> {
    return this.schedules.list(query);
  }

  /** An evaluation's row as its object reports it (a report older than the one held is ignored). */
  async recordEvaluation(entry: EvaluationEntry, version: number): Promise<void> {
    this.evaluations.record(entry, version);
  }

  async listEvaluations(query: EvaluationQuery): Promise<EvaluationPage> {
    return this.evaluations.list(query);
  }
}
