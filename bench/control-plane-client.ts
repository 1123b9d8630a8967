import { type ChildProcess, fork } from "node:child_process";
import { type Agent, request } from "node:http";
import { fileURLToPath } from "node:url";
import { DEFAULT_API_KEY } from "../src/control-plane/options.js";

// The control-plane benches' server process (control-plane-server.ts, forked with --expose-gc)
// and a light node:http client for it.

const SERVER = fileURLToPath(new URL("./control-plane-server.js", import.meta.url));
const DEFAULT_HEADERS = { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" };

export type Server = {
  url: URL;
  child: ChildProcess;
  ask(message: string): Promise<Record<string, unknown>>;
};

export async function startServer(mode: string, logging = false): Promise<Server> {
  const child = fork(SERVER, [mode, logging ? "log" : "quiet"], { execArgv: ["--expose-gc"] });
  const replies: Array<(m: Record<string, unknown>) => void> = [];
  const first = new Promise<Record<string, unknown>>((resolve, reject) => {
    replies.push(resolve);
    child.once("exit", (code) => reject(new Error(`bench server exited with ${code}`)));
  });
  child.on("message", (m) => replies.shift()?.(m as Record<string, unknown>));
  const { url } = (await first) as { url: string };
  const ask = (message: string) =>
    new Promise<Record<string, unknown>>((resolve) => {
      replies.push(resolve);
      child.send(message);
    });
  return { url: new URL(url), child, ask };
}

export async function stopServer(server: Server): Promise<void> {
  const exited = new Promise((resolve) => server.child.once("exit", resolve));
  server.child.send("stop");
  await exited;
}

export type Answer = { status: number; body: string };

export function call(
  agent: Agent,
  url: URL,
  method: string,
  path: string,
  body?: string,
  headers: Record<string, string> = DEFAULT_HEADERS,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request({ agent, host: url.hostname, port: url.port, method, path, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => (text += chunk));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.on("error", reject);
    req.end(body);
  });
}
