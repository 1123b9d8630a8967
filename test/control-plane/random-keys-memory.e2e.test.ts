import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { Agent, request } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { assertBuilt } from "../support/built-cli.js";

// Issue 10: 40,000 requests with random 8 KB keys took the server from 84 MB to 384 MB RSS (a
// rate-limit bucket per key presented). The built server runs in its own process (as in
// bench/control-plane-hostile); after a warm-up of 10,000 valid requests, 10,000 random-key
// requests must grow its RSS (after a full GC) by less than 30 MB. 10,000 of each are enough to
// fail: with the failure limiter off and a bucket per presented key, RSS grew by 141 MB; the
// bench keeps the 40,000 (and four times this test's CPU).

let child: ChildProcess;
let url: URL;
const replies: Array<(m: Record<string, unknown>) => void> = [];
const ask = (message: string) =>
  new Promise<Record<string, unknown>>((resolve) => {
    replies.push(resolve);
    child.send(message);
  });

beforeAll(async () => {
  assertBuilt();
  child = fork(join(process.cwd(), "dist", "bench", "control-plane-server.js"), ["memory"], {
    execArgv: ["--expose-gc"],
  });
  child.on("message", (m) => replies.shift()?.(m as Record<string, unknown>));
  url = new URL(
    (await new Promise<Record<string, unknown>>((resolve) => replies.push(resolve))).url as string,
  );
}, 120_000);
afterAll(() => child?.kill());

async function send(count: number, key: () => string): Promise<Map<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: 32 });
  const statuses = new Map<number, number>();
  let next = 0;
  const one = () =>
    new Promise<number>((resolve, reject) => {
      const req = request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          path: "/v2/deployments?limit=1",
          headers: { "x-api-key": key() },
        },
        (res) => res.resume().on("end", () => resolve(res.statusCode ?? 0)),
      );
      req.on("error", reject).end();
    });
  await Promise.all(
    Array.from({ length: 32 }, async () => {
      while (next++ < count) {
        const status = await one();
        statuses.set(status, (statuses.get(status) ?? 0) + 1);
      }
    }),
  );
  agent.destroy();
  return statuses;
}

it("10,000 requests with random 8 KB keys grow RSS by less than 30 MB", async () => {
  expect((await send(10_000, () => DEFAULT_API_KEY)).get(200)).toBe(10_000);
  const before = (await ask("memory")).rss as number;
  const statuses = await send(10_000, () => randomBytes(4096).toString("hex"));
  const after = (await ask("memory")).rss as number;
  expect(statuses.get(401)).toBe(100); // then the address is limited
  expect(statuses.get(429)).toBe(9_900);
  expect((after - before) / 1024 / 1024).toBeLessThan(30);
}, 120_000);
