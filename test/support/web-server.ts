// A small web server on 127.0.0.1 for WebFetch and curl tests: an HTML page, plain text, a large body, a slow
// answer, redirects (one to a private address, one to another origin), an echo of the credentials a request
// carried, an error status, and a gate (/gate?id=&n=) that shows whether n requests were in flight together. A second server on another port is the "other origin" of the cross-origin redirect.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { rendezvous } from "./rendezvous.ts";

const PAGE = `<!doctype html><html><head><title>Fixture</title><style>body{color:red}</style>
<script>var secret = "do not show";</script></head>
<body><h1>Outpost fixture</h1><p>Hello &amp; welcome to the <a href="/docs">docs</a>.</p>
<ul><li>first</li><li>second</li></ul><noscript>enable js</noscript></body></html>`;

/** The credential headers a request arrived with, as JSON (null for an absent one). */
function echoCredentials(req: IncomingMessage, res: ServerResponse, origin: string): void {
  res.writeHead(200, { "content-type": "application/json" });
  res.end(
    JSON.stringify({
      origin,
      authorization: req.headers.authorization ?? null,
      cookie: req.headers.cookie ?? null,
      "proxy-authorization": req.headers["proxy-authorization"] ?? null,
    }),
  );
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return `http://127.0.0.1:${address.port}`;
}

export async function startWebServer(): Promise<{ url: string; close(): Promise<void> }> {
  // The other origin: same host, another port.
  const other = createServer((req, res) => {
    if (req.url === "/echo-credentials") return echoCredentials(req, res, "other");
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("no such page");
  });
  const otherUrl = await listen(other);
  const server = createServer((req, res) => {
    const url = req.url ?? "/";
    if (url === "/echo-credentials") return echoCredentials(req, res, "main");
    if (url === "/redirect-same-origin") {
      res.writeHead(302, { location: "/echo-credentials" });
      return res.end();
    }
    if (url === "/redirect-cross-origin") {
      res.writeHead(302, { location: `${otherUrl}/echo-credentials` });
      return res.end();
    }
    if (url === "/page.html") {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8" });
      return res.end(PAGE);
    }
    if (url === "/plain.txt") {
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end("plain text body\n");
    }
    if (url === "/big") {
      res.writeHead(200, { "content-type": "text/plain" });
      return res.end("x".repeat(3 * 1024 * 1024));
    }
    if (url === "/slow") {
      const timer = setTimeout(() => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end("late");
      }, 5_000);
      res.on("close", () => clearTimeout(timer));
      return;
    }
    if (url.startsWith("/gate?")) {
      // Answers "together" when `n` requests of gate `id` are in flight at once, else "alone" (test/support/rendezvous.ts).
      const query = new URL(url, "http://127.0.0.1").searchParams;
      void rendezvous(query.get("id") ?? "", Number(query.get("n") ?? 2), 1_500).then((outcome) => {
        res.writeHead(200, { "content-type": "text/plain" });
        res.end(`gate ${query.get("id")}: ${outcome}`);
      });
      return;
    }
    if (url === "/redirect-ok") {
      res.writeHead(302, { location: "/plain.txt" });
      return res.end();
    }
    if (url === "/redirect-private") {
      res.writeHead(302, { location: "http://10.0.0.1/admin" });
      return res.end();
    }
    res.writeHead(404, { "content-type": "text/plain" });
    res.end("no such page");
  });
  const url = await listen(server);
  const close = (s: Server) => new Promise<void>((resolve) => s.close(() => resolve()));
  return {
    url,
    close: async () => {
      await Promise.all([close(server), close(other)]);
    },
  };
}
