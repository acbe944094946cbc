// A meeting point for calls that should run at the same time: a call names a gate and how many calls it waits for,
// and answers "together" once that many calls of the gate are in flight, or "alone" when `timeoutMs` passes first.
// A test server answering through it shows whether the caller ran its calls side by side (the web server's /gate,
// the ledger's tools), without timing anything.

interface Gate {
  waiting: (() => void)[];
}

const gates = new Map<string, Gate>();

export async function rendezvous(id: string, n: number, timeoutMs: number): Promise<"together" | "alone"> {
  const gate = gates.get(id) ?? { waiting: [] };
  gates.set(id, gate);
  let release: () => void = () => {};
  const met = new Promise<"together">((resolve) => {
    release = () => resolve("together");
  });
  gate.waiting.push(release);
  if (gate.waiting.length >= n) {
    for (const waiting of gate.waiting) waiting();
    gates.delete(id);
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"alone">((resolve) => {
    timer = setTimeout(() => resolve("alone"), timeoutMs);
  });
  const outcome = await Promise.race([met, timeout]);
  clearTimeout(timer);
  if (outcome === "alone") {
    const still = gates.get(id);
    if (still) still.waiting = still.waiting.filter((waiting) => waiting !== release);
  }
  return outcome;
}
