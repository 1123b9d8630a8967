import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt, runCli } from "../support/built-cli.js";

// The ids a control plane answers are printed by apply (its progress lines and summary), status (its
// table, from the records apply wrote) and plan (a deletion of a deployment removed from git). They
// were printed as answered: an escape sequence in an id cleared the terminal or a CI log's screen.
// A proxy before the local control plane adds ESC[2J to every id it answers and takes it off the
// paths it is sent, so the rest of the conversation works; the built CLI prints it escaped.

const MARK = "\u001b[2J";
const ENCODED = encodeURIComponent(MARK);
let cp: RunningControlPlane;
let proxy: Server;
let proxyUrl: string;
let root: string;

function startIdProxy(upstream: URL): Promise<Server> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const out = request(
        {
          host: upstream.hostname,
          port: upstream.port,
          method: req.method,
          path: (req.url ?? "/").split(ENCODED).join(""),
          headers: req.headers,
        },
        (answer) => {
          const body: Buffer[] = [];
          answer.on("data", (c: Buffer) => body.push(c));
          answer.on("end", () => {
            const text = Buffer.concat(body)
              .toString("utf8")
              .replace(/"(id|latest_revision_id|active_revision_id)":"([^"]+)"/g, '"$1":"$2\\u001b[2J"');
            const { "content-length": _length, ...headers } = answer.headers;
            res.writeHead(answer.statusCode ?? 502, headers);
            res.end(text);
          });
        },
      );
      out.end(Buffer.concat(chunks));
    });
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

beforeAll(async () => {
  assertBuilt();
  cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  proxy = await startIdProxy(new URL(cp.url));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  root = await mkdtemp(join(tmpdir(), "plumb-id-controls-"));
  await writeFile(
    join(root, "alpha.yaml"),
    [
      "apiVersion: plumb/v1",
      "kind: Deployment",
      "metadata:",
      "  name: alpha",
      "spec:",
      "  source: internal_container",
      '  source_revision_config: {image_uri: "img/a:1"}',
      "",
    ].join("\n"),
  );
});
afterAll(async () => {
  proxy?.closeAllConnections();
  await new Promise((resolve) => proxy?.close(resolve));
  await cp?.stop();
  await rm(root, { recursive: true, force: true });
});

const plumb = (...args: string[]) =>
  runCli(args, { PLUMB_API_URL: proxyUrl, PLUMB_API_KEY: DEFAULT_API_KEY, PLUMB_LOG_LEVEL: "silent" });

it("apply, status and plan print the server's ids with their control characters escaped", async () => {
  const applied = await plumb("apply", root, "--yes");
  expect(applied.output).toMatch(/revision [0-9a-f-]+\\u001b\[2J/);
  expect(applied.output).not.toContain("\u001b");
  expect(applied.code).toBe(0);

  const status = await plumb("status", root);
  expect(status.output).toMatch(/[0-9a-f-]+\\u001b\[2J/);
  expect(status.output).not.toContain("\u001b");

  const alpha = await readFile(join(root, "alpha.yaml"), "utf8");
  await writeFile(join(root, "beta.yaml"), alpha.replace("name: alpha", "name: beta"));
  await rm(join(root, "alpha.yaml"));
  const plan = await plumb("plan", root, "--prune");
  expect(plan.output).toMatch(/delete Deployment alpha \([0-9a-f-]+\\u001b\[2J\)/);
  expect(plan.output).not.toContain("\u001b");
}, 30_000);
