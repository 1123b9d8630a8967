import { connect, type Socket } from "node:net";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Registry } from "prom-client";
import { afterEach, describe, expect, it } from "vitest";
import { type ControllerHttp, startControllerHttp } from "../../src/controller/http/http-server.js";
import { signBody } from "../../src/controller/source/webhook.js";

// POST /hooks/git on the controller's server: a signed delivery fetches once; the same delivery
// again is refused (409) and fetches nothing. A body is checked as it arrives, never kept whole.

let http: ControllerHttp | undefined;
afterEach(async () => {
  await http?.close();
  http = undefined;
});

const webhookServer = (refused: string[] = []) =>
  startControllerHttp(
    { host: "127.0.0.1", port: 0 },
    {
      ready: () => true,
      registry: new Registry(),
      status: () => ({}),
      webhookSecret: "hook-secret",
      onWebhook: () => {},
      onBadWebhook: (reason) => refused.push(reason),
    },
  );

/** A raw HTTP/1.1 POST of /hooks/git announcing `length` bytes; `answer` resolves with its status line. */
function rawPost(url: string, headers: string, length: number) {
  const { port } = new URL(url);
  const socket: Socket = connect(Number(port), "127.0.0.1");
  socket.on("error", () => {});
  socket.write(`POST /hooks/git HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: ${length}\r\n${headers}\r\n`);
  let text = "";
  const answer = new Promise<string>((resolve) => {
    socket.on("data", (data) => (text += String(data)));
    socket.on("close", () => resolve(text.split("\r\n")[0] ?? ""));
  });
  return { socket, answer };
}

const written = (socket: Socket, data: Buffer) =>
  new Promise<void>((resolve) => socket.write(data, () => resolve()));

describe("POST /hooks/git", () => {
  it("keeps no body while reading it: 40 unfinished 1 MiB deliveries hold a few MB, not 40", async () => {
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    const buffers = () => {
      gc();
      return process.memoryUsage().arrayBuffers;
    };
    const refused: string[] = [];
    http = await webhookServer(refused);
    const before = buffers();
    const length = 1024 * 1024;
    const posts = Array.from({ length: 40 }, (_, i) =>
      rawPost(
        http!.url,
        `X-Hub-Signature-256: sha256=${"0".repeat(64)}\r\nX-GitHub-Delivery: m-${i}\r\n`,
        length,
      ),
    );
    await Promise.all(posts.map(({ socket }) => written(socket, Buffer.alloc(length - 1, 97))));
    // What the server holds once it has read what was sent: the least of the last few looks, so a
    // passing allocation of another test sharing this process does not count.
    const held: number[] = [];
    for (let turn = 0; turn < 10; turn++) {
      await new Promise((resolve) => setTimeout(resolve, 100)); // the server reads what was sent
      held.push(buffers() - before);
    }
    posts.forEach(({ socket }) => socket.end(Buffer.from("a")));
    // Every body was read to its end (each answered): the bytes went through and were let go.
    expect(await Promise.all(posts.map(({ answer }) => answer))).toEqual(
      posts.map(() => "HTTP/1.1 401 Unauthorized"),
    );
    expect(refused).toHaveLength(40);
    expect(Math.min(...held.slice(-3))).toBeLessThan(8 * 1024 * 1024);
  });

  it("refuses a delivery with no signature before reading its body, and closes the connection", async () => {
    const refused: string[] = [];
    http = await webhookServer(refused);
    const post = rawPost(http.url, "", 1024 * 1024); // the body is never sent
    expect(await post.answer).toBe("HTTP/1.1 401 Unauthorized");
    expect(refused).toEqual(["signature"]);
  });

  it("accepts a signed delivery once and refuses its replay", async () => {
    const fetched: string[] = [];
    const refused: string[] = [];
    http = await startControllerHttp(
      { host: "127.0.0.1", port: 0 },
      {
        ready: () => true,
        registry: new Registry(),
        status: () => ({}),
        webhookSecret: "hook-secret",
        onWebhook: () => fetched.push("fetch"),
        onBadWebhook: (reason) => refused.push(reason),
      },
    );
    const body = JSON.stringify({ ref: "refs/heads/main", after: "abc" });
    const post = (signature: string, delivery: string) =>
      fetch(`${http!.url}/hooks/git`, {
        method: "POST",
        headers: { "x-hub-signature-256": signature, "x-github-delivery": delivery },
        body,
      });
    expect((await post(signBody("wrong", body), "d-0")).status).toBe(401);
    expect((await post(signBody("hook-secret", body), "d-1")).status).toBe(202);
    const replay = await post(signBody("hook-secret", body), "d-1");
    expect(replay.status).toBe(409);
    expect(await replay.json()).toEqual({ detail: "delivery already received" });
    expect((await post(signBody("hook-secret", body), "d-2")).status).toBe(409);
    expect(fetched).toEqual(["fetch"]);
    expect(refused).toEqual(["signature", "replayed", "replayed"]);
  });
});
