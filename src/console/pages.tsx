/** @jsxImportSource hono/jsx */
// The web console's pages: one shell per page, rendered on the server with hono/jsx, holding no data at all (no task,
// no session, not even the id in the path). The browser script (console/, served at /console/app.js) asks for the API
// key and fetches everything through the public /v1 API, so these pages are safe to serve without a key.
import type { FC } from "hono/jsx";
import { CONSOLE_ASSETS_VERSION } from "./assets.generated.ts";

/** Which page the shell is for; the script reads the rest from the path. */
export type ConsolePage = "tasks" | "task" | "sessions" | "session";

const TITLES: Readonly<Record<ConsolePage, string>> = {
  tasks: "Tasks",
  task: "Task",
  sessions: "Chat",
  session: "Chat",
};

export const ConsoleShell: FC<{ page: ConsolePage }> = ({ page }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <meta name="referrer" content="no-referrer" />
      <title>{`${TITLES[page]} · Outpost`}</title>
      <link rel="icon" href="/console/icon.svg" type="image/svg+xml" />
      <link rel="stylesheet" href={`/console/app.css?v=${CONSOLE_ASSETS_VERSION}`} />
      <script src={`/console/app.js?v=${CONSOLE_ASSETS_VERSION}`} defer />
    </head>
    <body data-page={page}>
      <header class="top">
        <a class="brand" href="/console">
          Outpost
        </a>
        <nav aria-label="Console">
          <a href="/console">Tasks</a>
          <a href="/console/sessions">Chat</a>
        </nav>
        <button type="button" id="sign-out" class="small">
          Sign out
        </button>
      </header>
      <main id="main">
        <noscript>The Outpost console needs JavaScript.</noscript>
      </main>
    </body>
  </html>
);
