import { type ChildProcess, execFile, spawn } from "node:child_process";
import { once } from "node:events";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { freePort } from "../support/free-port.js";

// The image's HEALTHCHECK (scripts/image-healthcheck.mjs) probes the port the process was started
// with, read from its command line, not a hard-coded 9400. Here the "controller" is a small server
// started with a --listen argument; the image test runs the script against the real one.

const children: ChildProcess[] = [];
afterEach(() => {
  for (const child of children.splice(0)) child.kill();
});

/** A process with `args` on its command line answering GET /livez with `status` on `port`. */
async function server(port: number, status: number, args: string[]): Promise<number> {
  const code = `require("http").createServer((q,s)=>{s.writeHead(q.url==="/livez"?${status}:404).end()}).listen(${port},"127.0.0.1",()=>console.log("up"))`;
  const child = spawn(process.execPath, ["-e", code, "--", ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
  children.push(child);
  await once(child.stdout, "data");
  return child.pid!;
}

async function healthcheck(pid: number): Promise<number> {
  try {
    await promisify(execFile)(process.execPath, ["scripts/image-healthcheck.mjs", String(pid)]);
    return 0;
  } catch (error) {
    return (error as { code: number }).code;
  }
}

describe("the image's HEALTHCHECK", () => {
  it("probes /livez on the port of the process's own --listen, any form", async () => {
    const a = await freePort();
    expect(await healthcheck(await server(a, 200, ["controller", "--listen", `0.0.0.0:${a}`]))).toBe(0);
    const b = await freePort();
    expect(await healthcheck(await server(b, 200, [`--listen=127.0.0.1:${b}`]))).toBe(0);
  });

  it("fails when /livez does not answer 200 or nothing listens there", async () => {
    const a = await freePort();
    expect(await healthcheck(await server(a, 503, ["--listen", `:${a}`]))).toBe(1);
    const b = await freePort();
    const other = await freePort();
    expect(await healthcheck(await server(other, 200, ["--listen", `127.0.0.1:${b}`]))).toBe(1);
  });
});
