import { createServer, type IncomingMessage, request as httpRequest, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// A loopback HTTP proxy in front of the local control plane that can hold one chosen request:
// the test learns the exact moment a request is in flight (to kill the client then), and decides
// afterwards whether the server ever sees it (`forward`) or not (`drop`). Tests only.

type HeldRequest = {
  method: string;
  url: string;
  /** Sends it on; resolves once the client has the answer. */
  forward(): Promise<void>;
  drop(): void;
  /**
   * Sends it on now and resolves once the server answered, with what passes that answer on to the
   * client: a send that landed while its answer is still on the way.
   */
  land(): Promise<() => void>;
};

export type HoldingProxy = {
  url: string;
  /** Every request seen, in order (method and path). */
  requests: Array<{ method: string; url: string }>;
  /** Resolves with the first request matching `match` from now on, held until forwarded or dropped. */
  hold(match: (method: string, url: string) => boolean): Promise<HeldRequest>;
  /** Calls `seen` (once) for the first request matching `match` from now on, without holding it. */
  watch(match: (method: string, url: string) => boolean): Promise<void>;
  close(): Promise<void>;
};

type Trap = { match: (m: string, u: string) => boolean; hold: boolean; resolve: (h: HeldRequest) => void };

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** Changes an answer's body on its way back (a server answering what ours never would). */
type Rewrite = (method: string, url: string, body: Buffer) => Buffer;

export async function startHoldingProxy(
  upstream: string,
  options: { rewrite?: Rewrite } = {},
): Promise<HoldingProxy> {
  const target = new URL(upstream);
  const traps: Trap[] = [];
  const requests: HoldingProxy["requests"] = [];

  const send = (req: IncomingMessage, body: Buffer, res: ServerResponse | null, answerWhen?: Promise<void>) =>
    new Promise<void>((resolve) => {
      const out = httpRequest(
        { host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          const chunks: Buffer[] = [];
          answer.on("data", (c: Buffer) => chunks.push(c));
          answer.on("end", () => {
            const reply = () => {
              if (!res || res.destroyed) return;
              const body = Buffer.concat(chunks);
              const rewrite = options.rewrite;
              if (!rewrite) {
                res.writeHead(answer.statusCode ?? 502, answer.headers);
                res.end(body);
              } else {
                const { "content-length": _length, ...headers } = answer.headers;
                res.writeHead(answer.statusCode ?? 502, headers);
                res.end(rewrite(req.method ?? "GET", req.url ?? "/", body));
              }
            };
            if (answerWhen) void answerWhen.then(reply);
            else reply();
            resolve();
          });
        },
      );
      out.on("error", () => {
        res?.destroy();
        resolve();
      });
      out.end(body);
    });

  const server = createServer((req, res) => {
    void readBody(req).then((body) => {
      const method = req.method ?? "GET";
      const url = req.url ?? "/";
      requests.push({ method, url });
      const index = traps.findIndex((t) => t.match(method, url));
      const trap = index >= 0 ? traps.splice(index, 1)[0] : undefined;
      if (!trap) return send(req, body, res);
      if (!trap.hold) {
        const done = async () => {};
        trap.resolve({ method, url, forward: done, drop: () => {}, land: async () => done });
        return send(req, body, res);
      }
      // Held: the client's connection stays open; the server sees the request only when forwarded
      // (its answer then goes nowhere if the client is gone).
      const land = async () => {
        let pass!: () => void;
        const passed = new Promise<void>((resolve) => (pass = resolve));
        await send(req, body, res, passed);
        return pass;
      };
      trap.resolve({ method, url, forward: () => send(req, body, res), drop: () => res.destroy(), land });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const trap = (match: Trap["match"], hold: boolean) =>
    new Promise<HeldRequest>((resolve) => traps.push({ match, hold, resolve }));
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    hold: (match) => trap(match, true),
    watch: async (match) => void (await trap(match, false)),
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
