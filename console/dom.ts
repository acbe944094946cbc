// The console's only way to make DOM: elements built with properties and text nodes, never HTML strings. Everything
// shown comes from the API (model text, tool inputs and outputs are attacker-controlled), so no function here parses
// markup: `h` sets attributes with setAttribute and children as text nodes, and there is no innerHTML in the console.

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | null | undefined | EventListener>;

/** An element: attributes (`on…` keys add listeners; false/null/undefined are left out) and children. */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs | null = null,
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === false || value === null || value === undefined) continue;
      if (typeof value === "function") el.addEventListener(name.slice(2).toLowerCase(), value);
      else el.setAttribute(name, value === true ? "" : String(value));
    }
  }
  append(el, children);
  return el;
}

export function append(parent: Node, children: (Child | Child[])[]): void {
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(typeof child === "object" ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function replace(parent: Element, ...children: (Child | Child[])[]): void {
  parent.replaceChildren();
  append(parent, children);
}

/** A console URL, with each segment of the id escaped (ids come from the API). */
export function consolePath(kind: "tasks" | "sessions", id: string): string {
  return `/console/${kind}/${encodeURIComponent(id)}`;
}

export function formatTime(iso: unknown): string {
  if (typeof iso !== "string") return "";
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toLocaleString();
}

export function formatCost(usd: unknown): string {
  if (typeof usd !== "number") return "—";
  return usd < 0.01 ? `$${usd.toFixed(4)}` : `$${usd.toFixed(2)}`;
}

/**
 * A usage's input tokens as Outpost counts them (a model call's `meta.usage`, a task's `usage`): `input_tokens` is
 * only the part neither written to nor read from the prompt cache; `cache_creation_1h_input_tokens`, the part of the
 * writes at the 1-hour TTL, is absent when there is none.
 */
export interface InputTokens {
  plain: number;
  written: number;
  written1h: number;
  read: number;
}

export function inputTokens(usage: unknown): InputTokens {
  const u = (usage ?? {}) as Record<string, unknown>;
  const n = (value: unknown) => (typeof value === "number" ? value : 0);
  return {
    plain: n(u.input_tokens),
    written: n(u.cache_creation_input_tokens),
    written1h: n(u.cache_creation_1h_input_tokens),
    read: n(u.cache_read_input_tokens),
  };
}

/** All the input: uncached, written to the cache and read from it. */
export function totalInput(tokens: InputTokens): number {
  return tokens.plain + tokens.written + tokens.read;
}

/** The input's split, for a tooltip or a detail line. */
export function inputSplit(tokens: InputTokens): string {
  const oneHour = tokens.written1h > 0 ? ` (${tokens.written1h} at the 1 h TTL)` : "";
  return `Input tokens: ${tokens.plain} plain · ${tokens.written} cache write${oneHour} · ${tokens.read} cache read`;
}

/**
 * "cache 86%": the share of the input read from the prompt cache (reads over all the input, rounded), with the split
 * in its tooltip. Null when nothing was written to or read from the cache: no share to speak of.
 */
export function cacheShare(tokens: InputTokens): HTMLElement | null {
  if (tokens.written + tokens.read === 0) return null;
  const share = Math.round((100 * tokens.read) / totalInput(tokens));
  return h("span", { class: "cache-share", title: inputSplit(tokens) }, `cache ${share}%`);
}

export function formatBytes(n: unknown): string {
  if (typeof n !== "number") return "";
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** JSON for people: strings as themselves, anything else pretty-printed. */
export function pretty(value: unknown): string {
  if (typeof value === "string") return value;
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

/** Above this many characters a block of text shows its start and a button that shows the rest. */
export const COLLAPSE_CHARS = 600;

/**
 * A <pre> with `text`, cut to its first COLLAPSE_CHARS characters behind a "Show all" button when longer, so a
 * timeline of thousands of tool outputs stays cheap to lay out.
 */
export function collapsible(text: string, className = "block"): HTMLElement {
  if (text.length <= COLLAPSE_CHARS) return h("pre", { class: className }, text);
  const pre = h("pre", { class: className }, `${text.slice(0, COLLAPSE_CHARS)}…`);
  const button = h("button", { type: "button", class: "link" }, `Show all (${formatBytes(text.length)})`);
  button.addEventListener("click", () => {
    pre.textContent = text;
    button.remove();
  });
  return h("div", { class: "collapsible" }, pre, button);
}

/** A status badge (its class gives the colour). */
export function badge(status: string): HTMLElement {
  return h("span", { class: `badge status-${status.replace(/[^a-z_]/g, "")}` }, status.replace(/_/g, " "));
}

/** A line telling the user what failed, with Outpost's error code when there is one. */
export function errorLine(error: unknown): HTMLElement {
  return h("p", { class: "error", role: "alert" }, describeError(error));
}

export function describeError(error: unknown): string {
  if (error && typeof error === "object" && "code" in error && "message" in error) {
    return `${String((error as { message: unknown }).message)} (${String((error as { code: unknown }).code)})`;
  }
  return error instanceof Error ? error.message : String(error);
}
