import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { container, memoryLogger, waitFor, writeDoc } from "./support.js";

// pino writes a child's bindings and a line's fields side by side: a key bound in both appears twice
// in the JSON text (parsers keep the last one, log pipelines may keep either).

let dir: string;
let cp: RunningControlPlane;
let controller: Controller | undefined;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-ctl-log-"));
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  await controller?.stop(1_000);
  controller = undefined;
  await cp.stop();
  await rm(dir, { recursive: true, force: true });
});

/** How often `"key":` occurs in one raw JSON line. */
const occurrences = (line: string, key: string) => line.split(`"${key}":`).length - 1;

it("binds kind, name, id, revision and commit once per log line of a reconcile", async () => {
  await writeDoc(dir, "a.yaml", container("alpha", "img/alpha:1"));
  const log = memoryLogger();
  controller = await startController({
    source: { kind: "dir", dir },
    api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
    selfHeal: false,
    concurrency: 2,
    debounceMs: 30,
    backoffBaseMs: 50,
    backoffMaxMs: 200,
    timeoutMs: 10_000,
    pollIntervalMs: 10,
    maxPollIntervalMs: 50,
    env: process.env,
    logger: log.logger,
  });
  await waitFor("ready", () => controller!.ready());
  const lines = log
    .text()
    .split("\n")
    .filter((line) => line.includes('"name":"alpha"'));
  const reconciled = lines.filter((line) => line.includes('"msg":"reconciled"'));
  expect(reconciled).toHaveLength(1);
  for (const line of lines)
    for (const key of ["kind", "name", "id", "revision", "commit"])
      expect({ key, count: occurrences(line, key) }).toEqual({ key, count: 1 });
  // The create learned the id and revision: the last line carries them, not the nulls bound before.
  expect(JSON.parse(reconciled[0]!)).toMatchObject({ id: expect.any(String), revision: expect.any(String) });
});
