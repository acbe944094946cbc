// A webhook receiver on 127.0.0.1 for the callback tests: POST /r/<name> records the delivery (headers and raw
// body) and answers 500 to the first `fail` deliveries of that name (?fail=N), 200 after; GET /r/<name> lists what
// arrived, oldest first; PUT /r/<name> sets the body of the answers to that name (a text the URL does not contain).
import { createServer } from "node:http";

interface Received {
  headers: Record<string, string>;
  body: string;
  status: number;
}

export async function startCallbackReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const received = new Map<string, Received[]>();
  const replies = new Map<string, string>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://receiver");
    const name = /^\/r\/([\w-]+)$/.exec(url.pathname)?.[1];
    if (!name) {
      res.writeHead(404).end();
      return;
    }
    if (req.method === "GET") {
      res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(received.get(name) ?? []));
      return;
    }
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      if (req.method === "PUT") {
        replies.set(name, Buffer.concat(chunks).toString("utf8"));
        res.writeHead(204).end();
        return;
      }
      const list = received.get(name) ?? [];
      const fail = Number(url.searchParams.get("fail") ?? 0);
      const status = list.length < fail ? 500 : 200;
      const headers = Object.fromEntries(
        Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(", ") : (v ?? "")]),
      );
      list.push({ headers, body: Buffer.concat(chunks).toString("utf8"), status });
      received.set(name, list);
      const reply = replies.get(name) ?? (status === 200 ? "ok" : "try again");
      res.writeHead(status, { "content-type": "text/plain" }).end(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (!address || typeof address === "string") throw new Error("no port");
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}
