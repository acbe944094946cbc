// A task's event log (the SSE bytes its object streams, src/events/sse.ts) as A2A stream responses (A2A v1.0 §3.1.2,
// §4.2): the task first, then TaskStatusUpdateEvents when its state changes and TaskArtifactUpdateEvents for its
// answer. The answer's text streams as chunks of the "response" artifact (each model turn's text starts it over,
// append=false, then appends); at the end the artifact is sent whole (append=false, lastChunk=true), so a client that
// missed chunks (a resubscribe after a dropped stream) ends with the whole answer. The stream ends with the task's
// terminal state or when it waits for input, as A2A's streams do.
import { type Message, parseSseStream, type StreamResponse, type Task, TaskState } from "@a2a-js/sdk";
import type { PendingInput } from "../approvals/requests.ts";
import type { EventRecord } from "../events/event-record.ts";
import type { TaskView } from "../tasks/task.ts";
import { errorMessage, inputMessage, responseArtifact } from "./task-mapping.ts";

/** What the stream needs besides the events: the task's ids, and the task as it is now (for its end). */
export interface TaskStreamSource {
  taskId: string;
  contextId: string;
  /** The task now (for its result and error when it ends). */
  current: () => Promise<TaskView>;
  /** The stream is about to show the request the task waits for (a bare reply may answer it then). */
  shown: (requestId: string) => Promise<void>;
}

/** The events of an Outpost SSE stream, parsed (only the task's own: the stream is opened with depth 0). */
export async function* eventRecords(stream: ReadableStream<Uint8Array>): AsyncGenerator<EventRecord> {
  for await (const frame of parseSseStream(new Response(stream))) {
    // Every frame is an event record (src/events/sse.ts); its type is in the record as well as the frame's name.
    yield JSON.parse(frame.data) as EventRecord;
  }
}

function statusUpdate(source: TaskStreamSource, state: TaskState, at: string, message?: Message): StreamResponse {
  return {
    payload: {
      $case: "statusUpdate",
      value: {
        taskId: source.taskId,
        contextId: source.contextId,
        status: { state, message, timestamp: at },
        metadata: undefined,
      },
    },
  };
}

/** A chunk of the response artifact: a model turn's text as it streams, or (lastChunk) the whole answer at the end. */
function answerChunk(
  source: TaskStreamSource,
  text: string,
  chunk: { append: boolean; lastChunk: boolean; turn?: number },
): StreamResponse {
  return {
    payload: {
      $case: "artifactUpdate",
      value: {
        taskId: source.taskId,
        contextId: source.contextId,
        artifact: responseArtifact(text),
        append: chunk.append,
        lastChunk: chunk.lastChunk,
        metadata: chunk.turn === undefined ? undefined : { turn_index: chunk.turn },
      },
    },
  };
}

/**
 * The A2A stream of a task: `first` (the task as the request found or made it), then what its events say, until it
 * ends or waits for input. `records` are its events after the cursor the snapshot was taken at.
 */
export async function* taskStream(
  source: TaskStreamSource,
  first: Task,
  records: AsyncIterable<EventRecord>,
): AsyncGenerator<StreamResponse> {
  yield { payload: { $case: "task", value: first } };
  let state = first.status?.state;
  let textTurn: number | null = null;
  const working = (at: string): StreamResponse | null => {
    if (state === TaskState.TASK_STATE_WORKING) return null;
    state = TaskState.TASK_STATE_WORKING;
    return statusUpdate(source, state, at);
  };
  for await (const record of records) {
    if (record.depth !== undefined) continue;
    const at = record.timestamp;
    switch (record.event_type) {
      case "run_started":
      case "run_resumed":
      case "human_decision": {
        const update = working(at);
        if (update) yield update;
        break;
      }
      case "llm_request_sent":
        // A new attempt of a turn (its stream broke, or an eviction cut it) says the turn's text again: replace it.
        textTurn = null;
        break;
      case "llm_text_delta": {
        const update = working(at);
        if (update) yield update;
        const turn = Number(record.payload.turn_index);
        const append = textTurn === turn;
        textTurn = turn;
        yield answerChunk(source, String(record.payload.text ?? ""), { append, lastChunk: false, turn });
        break;
      }
      case "input_requested": {
        // The event's payload is the request (the catalog's input_requested schema is PendingInputSchema).
        const pending = { ...record.payload } as unknown as PendingInput;
        const message = inputMessage(source.taskId, source.contextId, pending);
        await source.shown(pending.request_id);
        yield statusUpdate(source, TaskState.TASK_STATE_INPUT_REQUIRED, at, message);
        return;
      }
      case "run_finished": {
        const task = await source.current();
        if (task.result !== null) yield answerChunk(source, task.result, { append: false, lastChunk: true });
        yield statusUpdate(source, TaskState.TASK_STATE_COMPLETED, at);
        return;
      }
      case "run_failed":
        yield statusUpdate(
          source,
          TaskState.TASK_STATE_FAILED,
          at,
          errorMessage(await source.current(), source.contextId),
        );
        return;
      case "run_canceled":
        yield statusUpdate(source, TaskState.TASK_STATE_CANCELED, at);
        return;
      default:
        break;
    }
  }
}
