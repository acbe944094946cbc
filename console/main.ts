// The console's browser script, bundled by scripts/build-console.ts into the Worker (src/console/assets.generated.ts)
// and served at /console/app.js. The Worker's pages are empty shells; this script reads which page it is on from the
// path, asks for the API key once (session-key.ts), and renders the page from the public /v1 API through the client
// package (@outpost/client), like any other client.
import type { OutpostClient } from "@outpost/client";
import { h, replace } from "./dom.ts";
import { forgetKey, signedInClient, signIn } from "./session-key.ts";
import { sessionListPage, sessionPage } from "./sessions.ts";
import { taskListPage } from "./task-list.ts";
import { taskPage } from "./task-page.ts";

async function start(): Promise<void> {
  const main = document.getElementById("main");
  if (!main) return;
  const signOut = document.getElementById("sign-out");
  signOut?.addEventListener("click", () => {
    forgetKey();
    location.assign("/console");
  });
  let client: OutpostClient = await signedInClient(main);
  const onAuthLost = () => {
    forgetKey();
    document.body.classList.remove("signed-in");
    void signIn(main, "The key was refused (revoked or expired?): enter one again.").then((c) => {
      client = c;
      void route(c);
    });
  };
  const route = async (c: OutpostClient) => {
    let parts: string[];
    try {
      parts = location.pathname.replace(/\/+$/, "").split("/").slice(2).map(decodeURIComponent);
    } catch {
      parts = ["?"]; // a malformed escape in the path: not a page
    }
    const [section, id] = parts;
    if (section === undefined) return taskListPage(main, c);
    if (section === "tasks" && id) return taskPage(main, c, id, onAuthLost);
    if (section === "sessions" && id) return sessionPage(main, c, id, onAuthLost);
    if (section === "sessions") return sessionListPage(main, c);
    replace(
      main,
      h("section", { class: "card" }, h("h1", null, "Not found"), h("a", { href: "/console" }, "Back to tasks")),
    );
  };
  await route(client);
}

void start();
