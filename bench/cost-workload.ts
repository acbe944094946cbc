// What the bench's cost case (bench/cost.ts) runs: an agent with a system prompt of about 10,000 tokens and the
// file tools, a workspace of twelve notes of 3.7–13.5 KB, and a scripted model that reads them, one or two files a
// turn, twelve calls in all, before it answers. Everything is generated from fixed seeds, so every run sends the same
// prompt bytes but for the task's own input; only the line that names the agent's edition differs between agents,
// so that each edition's system prompt starts cold in the provider's cache.

/** The emulator's script answers the conversations whose first user message holds this. */
export const COST_MARKER = "[outpost-bench-cost]";

/** The system prompt's length: about 10,000 tokens at the emulator's four characters a token. */
const SYSTEM_CHARS = 40_000;

/**
 * The notes' sizes in bytes. Read returns them as numbered lines (six digits and a tab before each), so each result
 * is about 1.1–4k tokens as the model sees it.
 */
const NOTE_BYTES = [4_000, 9_000, 13_500, 6_000, 11_500, 3_700, 12_500, 7_500, 10_500, 5_000, 13_000, 8_500] as const;

/** Files read per tool-using turn: twelve calls in ten turns, two of them with two reads at once. */
const READS_PER_TURN = [1, 1, 1, 2, 1, 1, 2, 1, 1, 1] as const;

/** Model calls of a run: one per tool-using turn, then the answer. */
export const COST_MODEL_CALLS = READS_PER_TURN.length + 1;
export const COST_TOOL_CALLS = NOTE_BYTES.length;

const WORDS = (
  "agent task workspace request answer model prompt cache token budget limit review design note storage event " +
  "stream object worker tenant schedule retry failure record bundle archive commit turn tool result summary " +
  "question decision option risk owner deadline measure latency throughput memory cost price input output plan " +
  "step check test deploy rollback version change reason evidence detail section table figure draft final open " +
  "closed pending careful clear short long early late small large every each some most few many first last next " +
  "previous current shared private public local remote durable fresh stale exact rough steady quiet busy"
).split(" ");

/** A small deterministic generator (mulberry32): the same seed, the same text. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** Prose of exactly `chars` characters, in lines of at most 78, from `seed`. */
function prose(seed: number, chars: number): string {
  const next = random(seed);
  const lines: string[] = [];
  let line = "";
  let sentence = 0;
  let length = 0;
  while (length < chars) {
    const word = WORDS[Math.floor(next() * WORDS.length)] ?? "note";
    sentence++;
    const ends = sentence >= 8 && next() < 0.15;
    const text = `${sentence === 1 ? word.charAt(0).toUpperCase() + word.slice(1) : word}${ends ? "." : ""}`;
    if (ends) sentence = 0;
    if (line.length + text.length + 1 > 78) {
      lines.push(line);
      length += line.length + 1;
      line = text;
    } else {
      line = line ? `${line} ${text}` : text;
    }
  }
  return `${lines.join("\n")}\n${line}`.slice(0, chars);
}

/** The system prompt of an agent edition: the same rules for every edition, after a line naming it. */
export function systemPrompt(edition: string): string {
  const head =
    `You are the cost bench's reviewer (edition ${edition}). You read the design notes in /workspace/notes with ` +
    "the file tools, one or two at a time, and then answer with the open questions they leave. The house rules " +
    "follow.\n\n";
  return head + prose(33, SYSTEM_CHARS - head.length);
}

/** The task's workspace: notes/part-01.md … part-12.md. */
export function noteFiles(): Record<string, string> {
  return Object.fromEntries(
    NOTE_BYTES.map((bytes, i) => {
      const title = `# Part ${i + 1}: design note\n\n`;
      return [notePath(i), title + prose(1_000 + i, bytes - title.length)];
    }),
  );
}

function notePath(index: number): string {
  return `notes/part-${String(index + 1).padStart(2, "0")}.md`;
}

/** The agent's definition for PUT /v1/agents/:name; `promptCache` absent keeps Outpost's default (on, 5 minutes). */
export function costAgent(name: string, edition: string, promptCache?: false | { ttl: "5m" | "1h" }): unknown {
  return {
    name,
    description: "Reads a workspace of design notes and lists their open questions (the bench's cost case).",
    instructions: systemPrompt(edition),
    claude: {
      file_system: { read: true },
      allowed_tools: ["Read", "Glob", "Grep"],
      max_turns: COST_MODEL_CALLS + 2,
    },
    ...(promptCache === undefined ? {} : { prompt_cache: promptCache }),
  };
}

/** POST /_emulator/scripts body: each turn a sentence and its reads, then the answer. */
export function costScript(): unknown {
  let read = 0;
  const turns: unknown[] = READS_PER_TURN.map((count, turn) => {
    const paths = Array.from({ length: count }, () => notePath(read++));
    return {
      content: [
        { type: "text", text: `Reading ${paths.join(" and ")} next (step ${turn + 1}).` },
        ...paths.map((path) => ({ type: "tool_use", name: "Read", input: { file_path: `/workspace/${path}` } })),
      ],
    };
  });
  turns.push({
    content: [
      {
        type: "text",
        text: "Open questions: who owns the retry budget, how long a stale cache entry may live, and which limits hold per tenant.",
      },
    ],
  });
  return { match: COST_MARKER, turns };
}
