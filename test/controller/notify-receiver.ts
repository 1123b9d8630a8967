import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A local webhook receiver for the --notify tests: records every delivery (headers and body) and
// answers what the test says (a status code, or never).

type Delivery = {
  path: string;
  headers: IncomingMessage["headers"];
  body: string;
  json: Record<string, unknown>;
};

export async function startReceiver(
  answer: (n: number, req: IncomingMessage) => number | "hang" = () => 204,
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
      else res.writeHead(code).end();
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
