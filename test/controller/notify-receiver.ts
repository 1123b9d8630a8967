import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A local webhook receiver for the --notify tests: records every delivery (headers and body) and
// answers what the test says (a status code, a status code with headers, or never).

type Delivery = {
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  json: Record<string, unknown>;
};

export async function startReceiver(
  answer: (
    n: number,
    req: IncomingMessage,
  ) => number | { status: number; headers: Record<string, string> } | "hang" = () => 204,
) {
  const deliveries: Delivery[] = [];
  const hanging: ServerResponse[] = [];
  let count = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      deliveries.push({
        path: req.url ?? "",
        headers: req.headers,
        body,
        json: JSON.parse(body) as Record<string, unknown>,
      });
      const code = answer(count++, req);
      if (code === "hang") hanging.push(res);
      else if (typeof code === "number") res.writeHead(code).end();
      else res.writeHead(code.status, code.headers).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    deliveries,
    events: () => deliveries.map((d) => d.json),
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
