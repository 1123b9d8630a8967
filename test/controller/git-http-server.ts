import { spawn } from "node:child_process";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";

// A git smart-HTTP server for tests: `git http-backend` (CGI) behind Basic auth, serving the bare
// repositories under `root`. Clones, fetches and pushes need exactly `user:token`.

export type GitHttpServer = { url: string; requests: { denied: number }; close(): Promise<void> };

/** An authenticated request as the backend gets it; a POST's body whole (git sends small ones plain). */
type SeenGitRequest = { method: string; url: string; body: Buffer };

const cgiEnv = (req: IncomingMessage, root: string): NodeJS.ProcessEnv => {
  const url = new URL(req.url ?? "/", "http://localhost");
  const header = (name: string) => {
    const value = req.headers[name];
    return Array.isArray(value) ? value[0] : value;
  };
  return {
    PATH: process.env.PATH,
    GIT_PROJECT_ROOT: root,
    GIT_HTTP_EXPORT_ALL: "1",
    REMOTE_USER: "tester", // http-backend allows receive-pack (push) for an authenticated user
    REQUEST_METHOD: req.method,
    PATH_INFO: decodeURIComponent(url.pathname),
    QUERY_STRING: url.search.slice(1),
    CONTENT_TYPE: header("content-type") ?? "",
    HTTP_CONTENT_ENCODING: header("content-encoding") ?? "",
    GIT_PROTOCOL: header("git-protocol") ?? "",
  };
};

export async function startGitHttpServer(
  root: string,
  user: string,
  token: string,
  /**
   * denyPush: every push is 403; denyPushTo: pushes that update a ref matching it are 403 (read live);
   * seen: told of every authenticated request before it is served (what a client asked, and when).
   */
  options: { denyPush?: boolean; denyPushTo?: RegExp; seen?: (request: SeenGitRequest) => void } = {},
): Promise<GitHttpServer> {
  const expected = `Basic ${Buffer.from(`${user}:${token}`).toString("base64")}`;
  const requests = { denied: 0 };
  const server = createServer((req, res) => {
    // The scheme is case-insensitive (actions/checkout sends "basic").
    if (req.headers.authorization?.replace(/^basic /i, "Basic ") !== expected) {
      requests.denied++;
      res.writeHead(401, { "www-authenticate": 'Basic realm="git"' }).end();
      return;
    }
    // A read-only token: fetches work, pushes are forbidden (as a token without contents: write).
    if (options.denyPush && (req.url ?? "").includes("git-receive-pack")) {
      requests.denied++;
      res.writeHead(403).end();
      return;
    }
    const cgi = spawn("git", ["http-backend"], { env: cgiEnv(req, root) });
    const seen = options.seen;
    const denying = options.denyPushTo && (req.url ?? "").endsWith("/git-receive-pack");
    if (req.method === "GET") seen?.({ method: "GET", url: req.url ?? "", body: Buffer.alloc(0) });
    if (req.method === "POST" && (denying || seen)) {
      // The ref updates are pkt-lines in plain text at the start of the body: look before passing it on.
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const body = Buffer.concat(chunks);
        seen?.({ method: "POST", url: req.url ?? "", body });
        if (denying && options.denyPushTo!.test(body.subarray(0, 4096).toString("latin1"))) {
          requests.denied++;
          cgi.kill();
          res.writeHead(403).end();
          return;
        }
        cgi.stdin.end(body);
      });
    } else req.pipe(cgi.stdin);
    let head = Buffer.alloc(0);
    let headersDone = false;
    cgi.stdout.on("data", (chunk: Buffer) => {
      // A denied push was answered 403 already: whatever the killed backend still printed is dropped.
      if (res.headersSent && !headersDone) return;
      if (headersDone) return void res.write(chunk);
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      headersDone = true;
      let status = 200;
      for (const line of head.subarray(0, end).toString().split("\r\n")) {
        const [name, ...rest] = line.split(":");
        const value = rest.join(":").trim();
        if (name!.toLowerCase() === "status") status = Number.parseInt(value, 10);
        else res.setHeader(name!, value);
      }
      res.writeHead(status);
      res.write(head.subarray(end + 4));
    });
    cgi.on("close", () => res.end());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
