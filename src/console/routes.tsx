/** @jsxImportSource hono/jsx */
// /console: the web console's pages and its two assets (the bundled browser script and the stylesheet). Nothing here
// needs a key or reads any data; the browser script calls the public /v1 API with the user's key. Every answer carries
// a strict Content-Security-Policy: scripts and styles from this origin only (no inline script, no eval), requests to
// this origin only, no frames, no plugins, no base or form targets elsewhere.
import { type Context, Hono } from "hono";
import { CONSOLE_ASSETS_VERSION, CONSOLE_SCRIPT, CONSOLE_STYLES } from "./assets.generated.ts";
import { type ConsolePage, ConsoleShell } from "./pages.tsx";

export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

/** A versioned asset never changes (its URL changes with it); a page is always fetched again. */
const IMMUTABLE = "public, max-age=31536000, immutable";

export const consoleRoutes = new Hono();

consoleRoutes.use("*", async (c, next) => {
  await next();
  c.res.headers.set("content-security-policy", CONSOLE_CSP);
  c.res.headers.set("x-content-type-options", "nosniff");
  c.res.headers.set("referrer-policy", "no-referrer");
  c.res.headers.set("x-frame-options", "DENY");
});

/** A page's shell: the same HTML for everyone (no data, no key needed). */
const page = (name: ConsolePage) => (c: Context) => {
  c.header("cache-control", "no-cache");
  return c.html(`<!doctype html>${<ConsoleShell page={name} />}`);
};

consoleRoutes.get("/", page("tasks"));
consoleRoutes.get("/tasks/:id", page("task"));
consoleRoutes.get("/sessions", page("sessions"));
consoleRoutes.get("/sessions/:id", page("session"));

/** The tab's icon (without one the browser asks for /favicon.ico, which the Worker does not serve). */
const ICON =
  '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#3b5bdb"/><path d="M9 22l7-12 7 12z" fill="#fff"/></svg>';

consoleRoutes.get("/icon.svg", (c) =>
  c.body(ICON, 200, { "content-type": "image/svg+xml", "cache-control": "public, max-age=86400" }),
);

consoleRoutes.get("/app.js", (c) =>
  c.body(CONSOLE_SCRIPT, 200, {
    "content-type": "text/javascript; charset=utf-8",
    "cache-control": c.req.query("v") === CONSOLE_ASSETS_VERSION ? IMMUTABLE : "no-cache",
  }),
);
consoleRoutes.get("/app.css", (c) =>
  c.body(CONSOLE_STYLES, 200, {
    "content-type": "text/css; charset=utf-8",
    "cache-control": c.req.query("v") === CONSOLE_ASSETS_VERSION ? IMMUTABLE : "no-cache",
  }),
);
