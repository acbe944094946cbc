// Benchmark configuration: the emulator's fixed latency, task counts per concurrency level, the scripted 3-turn
// conversation every measured task follows, the stalled script for the memory phase, the conversation case, the
// fan-out case, and the issues' targets.

/** Fixed model latency for every measured call: time to first token, then this much per streamed chunk. */
export const LATENCY = { ttftMs: 20, tokenDelayMs: 1 } as const;

export const API_KEY = "bench-key";
export const AGENT = "planner";
export const MODEL_TURNS = 3;

/** Measured runs: tasks per concurrency level (each level runs Outpost, then the bare-SDK floor). */
export const LEVELS = [
  { concurrency: 1, tasks: 40 },
  { concurrency: 20, tasks: 100 },
] as const;
export const WARMUP_TASKS = 6;
/**
 * The headline flow against self-hosted Outpost (npm start's workerd serve), after as many warm-up tasks: the same
 * tasks where none of the dev server's own Workers stand in the request path.
 */
export const SELF_HOSTED_LEVEL = { concurrency: 1, tasks: 40 } as const;

/** Memory phase: this many tasks held in flight by a model call that does not answer. */
export const STALLED_TASKS = 200;
/** Long enough that nothing answers before the phase cancels the tasks. */
export const STALL_TTFT_MS = 120_000;

/** Every measured task's input contains this, so the one script below answers all of them. */
export const MARKER = "[outpost-bench-3turn]";
export const STALL_MARKER = "[outpost-bench-stall]";

const FINAL_TEXT =
  "Plan ready: gather the requirements, sketch the design, build it in small steps, test each one, then ship it.";

/** POST /_emulator/scripts body: text + TodoWrite, text + TodoWrite, text only. */
export const SCRIPT = {
  match: MARKER,
  turns: [
    {
      content: [
        { type: "text", text: "I will write the plan down as a task list first." },
        { type: "tool_use", name: "TodoWrite", input: { todos: [{ content: "a", status: "pending" }] } },
      ],
    },
    {
      content: [
        { type: "text", text: "Updating the list: the first step is under way now." },
        {
          type: "tool_use",
          name: "TodoWrite",
          input: {
            todos: [
              { content: "a", status: "in_progress", activeForm: "Doing a" },
              { content: "b", status: "pending" },
            ],
          },
        },
      ],
    },
    { content: [{ type: "text", text: FINAL_TEXT }] },
  ],
};

export const STALL_SCRIPT = {
  match: STALL_MARKER,
  turns: [{ content: [{ type: "text", text: "never sent" }], ttft_ms: STALL_TTFT_MS }],
};

/** The conversation case: one session of this many messages; the first one's message contains CHAT_MARKER. */
export const CHAT_MESSAGES = 50;
export const CHAT_MARKER = "[outpost-bench-chat]";

/** The fan-out case: a parent delegating this many children in one turn, each one model call this slow. */
export const FANOUT_CHILDREN = 10;
export const FANOUT_CHILD_TTFT_MS = 200;
/** Trees measured per mode (all children at once; one at a time). */
export const FANOUT_TREES = 5;

/** The issues' targets (issue 16's first: they are the bench's headline). */
export const TARGETS = {
  /** CPU time of Outpost's workerd per 3-turn task, at concurrency 1 and 20. */
  cpuPerTaskMs: 25,
  /** Per-turn overhead as a client sees it (POST → run_finished frame, − model time, ÷ turns), p50 at c=1. */
  clientOverheadP50Ms: 6,
  /** In-run overhead (first request sent → run_finished, − model time, ÷ turns) p50, as a multiple of the floor's. */
  inRunOverheadRatioToFloor: 2,
  /** At concurrency 20. */
  c20FirstEventP95Ms: 100,
  c20TasksPerSecond: 60,
  /** Resident memory of Outpost's workerd per in-flight task. */
  memoryPerTaskKiB: 256,
  /** Earlier issues' targets, still held: first event p95 at c=1, in-run overhead p95 at c=1. */
  firstEventP95Ms: 50,
  overheadP95Ms: 10,
  /** A session's last messages cost at most this much more than its early ones (CPU per message). */
  chatLateToEarlyRatio: 1.2,
  /** Issue 33, the cost case (bench/cost.ts): billed input cost at most this multiple of the cache-optimal bound, */
  costToBoundRatio: 1.15,
  /** and at least this share below the same run with caching off. */
  costSavingVsUncached: 0.7,
} as const;
