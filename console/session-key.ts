// The API key: asked for once, kept in this tab's sessionStorage (gone when the tab closes; never in a URL, a cookie or
// localStorage), and handed to the client package, which sends it as a bearer token on every call. The pages the
// Worker serves hold no data: everything is fetched with this key, so a console without it shows only this form.
import { createOutpostClient, type OutpostClient, OutpostError } from "@outpost/client";
import { errorLine, h, replace } from "./dom.ts";

const STORAGE_KEY = "outpost.apiKey";

export function storedKey(): string | null {
  return sessionStorage.getItem(STORAGE_KEY);
}

export function forgetKey(): void {
  sessionStorage.removeItem(STORAGE_KEY);
}

export function clientFor(apiKey: string): OutpostClient {
  return createOutpostClient({ baseUrl: location.origin, apiKey });
}

/** The sign-in form; resolves with a client once a key has been accepted (GET /v1/agents answered). */
export function signIn(main: HTMLElement, reason?: string): Promise<OutpostClient> {
  return new Promise((resolve) => {
    const input = h("input", {
      id: "api-key",
      name: "api-key",
      type: "password",
      autocomplete: "off",
      spellcheck: "false",
      required: true,
    });
    const status = h("div", { "aria-live": "polite" });
    const form = h(
      "form",
      { class: "card sign-in", "aria-labelledby": "sign-in-title" },
      h("h1", { id: "sign-in-title" }, "Sign in"),
      h(
        "p",
        { class: "muted" },
        "Enter an Outpost API key. It is kept in this tab only (sessionStorage) and sent to this server as a bearer token.",
      ),
      reason ? h("p", { class: "error", role: "alert" }, reason) : null,
      h("label", { for: "api-key" }, "API key"),
      input,
      h("div", { class: "actions" }, h("button", { type: "submit", class: "primary" }, "Sign in")),
      status,
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const key = input.value.trim();
      if (!key) return;
      const client = clientFor(key);
      replace(status, h("p", { class: "muted" }, "Checking…"));
      try {
        await client.agents.list();
        sessionStorage.setItem(STORAGE_KEY, key);
        document.body.classList.add("signed-in");
        resolve(client);
      } catch (error) {
        const rejected = error instanceof OutpostError && (error.status === 401 || error.status === 403);
        replace(
          status,
          rejected ? h("p", { class: "error", role: "alert" }, "That key was not accepted.") : errorLine(error),
        );
      }
    });
    replace(main, form);
    input.focus();
  });
}

/** A client for the stored key, or the sign-in form first. */
export async function signedInClient(main: HTMLElement): Promise<OutpostClient> {
  const key = storedKey();
  if (key) {
    document.body.classList.add("signed-in");
    return clientFor(key);
  }
  return signIn(main);
}

/** Whether an error means the key no longer works (then the page asks for one again). */
export function isAuthError(error: unknown): boolean {
  return error instanceof OutpostError && error.status === 401;
}
