// A proxy in front of Outpost for the e2e tests of the client and the CLI: it forwards everything, but ends each of
// the first `cuts` event-stream responses (abruptly, as a dropped connection) once it has passed `framesPerCut` whole
// frames. It records each event stream it passed on: the request's method and the Last-Event-ID it carried.
import { once } from "node:events";
import { createServer, request as httpRequest, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach } from "vitest";
import { outpostUrl } from "./harness.ts";

export interface StreamConnection {
  method: string;
  /** The request's Last-Event-ID ("" when it had none: a stream from the start). */
  lastEventId: string;
}

const servers: Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    server.close();
  }
});

export async function cuttingProxy(
  cuts: number,
  framesPerCut: number,
): Promise<{ url: string; connections: StreamConnection[] }> {
  const target = new URL(outpostUrl());
  const connections: StreamConnection[] = [];
  let cutsLeft = cuts;
  const server = createServer((req, res) => {
    const upstream = httpRequest(
      { host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        const isStream = (answer.headers["content-type"] ?? "").startsWith("text/event-stream");
        if (isStream) {
          connections.push({ method: req.method ?? "", lastEventId: String(req.headers["last-event-id"] ?? "") });
        }
        const cut = isStream && cutsLeft-- > 0;
        let frames = 0;
        let cutting = false;
        answer.on("data", (chunk: Buffer) => {
          if (cutting) return;
          frames += (chunk.toString("utf8").match(/^id: /gm) ?? []).length;
          if (cut && frames >= framesPerCut) {
            // The frames so far reach the client, then the connection drops without an end.
            cutting = true;
            answer.destroy();
            res.write(chunk, () => res.destroy());
            return;
          }
          res.write(chunk);
        });
        answer.on("end", () => res.end());
      },
    );
    req.pipe(upstream);
  });
  servers.push(server);
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}`, connections };
}
