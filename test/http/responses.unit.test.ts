// The response schemas (src/http/responses.ts) as a whole: every one converts to JSON Schema (what the OpenAPI
// document is to be generated from) and is closed (a member it does not list fails, which is how every test that
// reads an answer checks it: test/support/helpers.ts parseBody); and the task's object's RPC methods are typed by the wire
// types, so that none of their results collapses to never and the Worker reads them without a cast.
import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import type { TaskObject } from "../../durable-objects/task-object.ts";
import type { Delivery } from "../../src/callbacks/delivery.ts";
import {
  AgentListSchema,
  AgentSchema,
  ArtifactListSchema,
  CallbackPayloadSchema,
  CheckpointListSchema,
  CheckpointSchema,
  DeliveryListSchema,
  ErrorBodySchema,
  HealthSchema,
  HookResponseSchema,
  InvocationSchema,
  MessageListSchema,
  RedeliveryResponseSchema,
  ResumeResponseSchema,
  SessionArtifactListSchema,
  SessionMessageListSchema,
  SessionResponseSchema,
  SessionResumeResponseSchema,
  SessionWorkspaceListSchema,
  TaskResponseSchema,
  TenantSchema,
  TurnResponseSchema,
  WorkspaceListSchema,
} from "../../src/http/responses.ts";
import type { Checkpoint } from "../../src/runtime/checkpoints.ts";
import type { StoredMessage } from "../../src/runtime/conversation.ts";
import type { SessionView, TurnView } from "../../src/sessions/session.ts";
import type { ResumeOutcome, StartOutcome, TaskView, ToolCallLedger } from "../../src/tasks/task.ts";

/** Every body the API answers with (and the callback it sends), by route. */
const BODIES: Readonly<Record<string, z.ZodType>> = {
  "GET /": HealthSchema,
  "errors (every route)": ErrorBodySchema,
  "GET /v1/agents": AgentListSchema,
  "GET /v1/agents/:name": AgentSchema,
  "POST /v1/agents/:name/tasks, GET /v1/tasks/:id, cancel, fork": TaskResponseSchema,
  "GET /v1/tasks/:id/messages": MessageListSchema,
  "GET /v1/tasks/:id/checkpoints": CheckpointListSchema,
  "GET /v1/tasks/:id/checkpoints/:checkpoint_id": CheckpointSchema,
  "POST /v1/tasks/:id/resume": ResumeResponseSchema,
  "GET /v1/tasks/:id/deliveries": DeliveryListSchema,
  "POST /v1/tasks/:id/deliveries/:delivery_id/redeliver": RedeliveryResponseSchema,
  "GET /v1/tasks/:id/artifacts": ArtifactListSchema,
  "GET /v1/tasks/:id/workspace": WorkspaceListSchema,
  "POST /v1/hooks/:hook_id": HookResponseSchema,
  "GET /v1/tenant": TenantSchema,
  "POST /v1/agents/:name/sessions, GET and DELETE /v1/sessions/:id": SessionResponseSchema,
  "POST /v1/sessions/:id/messages, GET /v1/sessions/:id/turns/:turn_id": TurnResponseSchema,
  "POST /v1/sessions/:id/resume": SessionResumeResponseSchema,
  "POST /v1/agents/:name/invoke (200)": InvocationSchema,
  "GET /v1/sessions/:id/messages": SessionMessageListSchema,
  "GET /v1/sessions/:id/artifacts": SessionArtifactListSchema,
  "GET /v1/sessions/:id/workspace": SessionWorkspaceListSchema,
  "callbacks (POST to the task's webhook URL)": CallbackPayloadSchema,
};

/** JSON Schema objects that list properties and still take others (additionalProperties not false), by path. */
function openObjects(node: unknown, path: string, found: string[]): string[] {
  if (Array.isArray(node)) {
    for (const [index, item] of node.entries()) openObjects(item, `${path}[${index}]`, found);
  } else if (typeof node === "object" && node !== null) {
    const schema = node as Record<string, unknown>;
    const extra = schema.additionalProperties;
    // A schema for the other members (a catchall) is a choice; an absent one lets anything through.
    if (schema.properties !== undefined && (extra === undefined || extra === true)) found.push(path);
    for (const [key, value] of Object.entries(schema)) openObjects(value, `${path}.${key}`, found);
  }
  return found;
}

describe("the response schemas", () => {
  it("convert to JSON Schema, every object in them closed", () => {
    const open = Object.entries(BODIES).flatMap(([route, schema]) =>
      openObjects(z.toJSONSchema(schema, { io: "output" }), route, []),
    );
    expect(open).toEqual([]);
  });

  it("refuse a member they do not list", () => {
    const receipt = {
      hook_id: "deploys",
      delivery_id: "d-1",
      task_id: crypto.randomUUID(),
      status: "pending",
      duplicate: false,
    };
    expect(HookResponseSchema.safeParse(receipt).success).toBe(true);
    expect(HookResponseSchema.safeParse({ ...receipt, input: "a task's content" }).success).toBe(false);
  });
});

describe("the task object's RPC results", () => {
  type Stub = DurableObjectStub<TaskObject>;
  type Returned<M extends keyof Stub> = Stub[M] extends (...args: never[]) => infer R ? Awaited<R> : never;

  it("are typed by the wire types, never collapsed to never", () => {
    // never extends every type: each result is checked against never first.
    expectTypeOf<Returned<"get">>().not.toBeNever();
    expectTypeOf<Returned<"get">>().toExtend<TaskView | null>();
    expectTypeOf<Returned<"wait">>().not.toBeNever();
    expectTypeOf<Returned<"wait">>().toExtend<TaskView | null>();
    expectTypeOf<Returned<"start">>().not.toBeNever();
    expectTypeOf<Returned<"start">>().toExtend<StartOutcome>();
    expectTypeOf<NonNullable<Returned<"cancel">["value"]>>().not.toBeNever();
    expectTypeOf<NonNullable<Returned<"cancel">["value"]>>().toExtend<TaskView>();
    expectTypeOf<NonNullable<Returned<"resume">["value"]>>().not.toBeNever();
    expectTypeOf<NonNullable<Returned<"resume">["value"]>>().toExtend<ResumeOutcome>();
    expectTypeOf<Returned<"messages">>().not.toBeNever();
    expectTypeOf<Returned<"messages">>().toExtend<StoredMessage[] | null>();
    expectTypeOf<Returned<"checkpoint">>().not.toBeNever();
    expectTypeOf<Returned<"checkpoint">>().toExtend<Checkpoint | null>();
    expectTypeOf<Returned<"forkPoint">>().not.toBeNever();
    expectTypeOf<Returned<"forkPoint">>().toExtend<Checkpoint | null>();
    expectTypeOf<Returned<"toolCallLedger">>().not.toBeNever();
    expectTypeOf<Returned<"toolCallLedger">>().toExtend<ToolCallLedger | null>();
    expectTypeOf<Returned<"deliveries">>().not.toBeNever();
    expectTypeOf<Returned<"deliveries">>().toExtend<Delivery[] | null>();
    expectTypeOf<NonNullable<Returned<"redeliver">["value"]>>().not.toBeNever();
    expectTypeOf<NonNullable<Returned<"redeliver">["value"]>>().toExtend<Delivery>();
    expectTypeOf<Returned<"session">>().not.toBeNever();
    expectTypeOf<Returned<"session">>().toExtend<SessionView | null>();
    expectTypeOf<Returned<"startSession">>().not.toBeNever();
    expectTypeOf<Returned<"startSession">>().toExtend<StartOutcome<SessionView>>();
    expectTypeOf<NonNullable<Returned<"send">["value"]>["turn"]>().not.toBeNever();
    expectTypeOf<NonNullable<Returned<"send">["value"]>["turn"]>().toExtend<TurnView>();
    expectTypeOf<Returned<"waitTurn">>().not.toBeNever();
    expectTypeOf<Returned<"waitTurn">>().toExtend<TurnView | null>();
    expectTypeOf<Returned<"closeSession">>().not.toBeNever();
    expectTypeOf<Returned<"closeSession">>().toExtend<SessionView | null>();
  });
});
