// JSON in one spelling per value, for comparing two values that may list the same object keys in another order
// (a decision sent again must match the recorded one however its client orders the keys).

/** JSON with object keys sorted at every level, so two spellings of one value compare equal. */
export function canonicalJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    item !== null && typeof item === "object" && !Array.isArray(item)
      ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : item,
  );
}
