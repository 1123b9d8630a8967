import { mkdir, mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt, spawnCli } from "../support/built-cli.js";
import { api, container, waitFor, writeDoc } from "./support.js";

// A controller over a directory reads the filesystem's clock from a file of its own in the
// temporary directory (snapshot/read-at-rest.ts). It removed that file's directory only when it
// stopped: a controller killed (SIGKILL, an OOM kill, a pod evicted) left one plumb-file-clock-*
// per run for ever. Now the file is unlinked once open: a kill leaves nothing in the temporary
// directory (the controller runs with TMPDIR of its own, so other tests' files do not count).

let cp: RunningControlPlane;
let dir: string;

beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), "plumb-killed-temp-dirs-"));
  cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
});
afterAll(async () => {
  await cp?.stop();
  await rm(dir, { recursive: true, force: true });
});

it("a controller killed with SIGKILL after its first reconcile leaves nothing in TMPDIR", async () => {
  const deploy = join(dir, "deploy");
  const temp = join(dir, "tmp");
  await rm(temp, { recursive: true, force: true });
  await mkdir(temp, { recursive: true });
  await writeDoc(deploy, "killed.yaml", container("killed", "img/killed:1"));
  const run = spawnCli(["controller", "--dir", deploy, "--listen", "127.0.0.1:0"], {
    PLUMB_API_KEY: DEFAULT_API_KEY,
    PLUMB_API_URL: cp.url,
    TMPDIR: temp,
  });
  try {
    await waitFor("the controller created its deployment", () => api(cp.url).deployment("killed"), 30_000);
    await waitFor("the controller wrote its record", async () =>
      (await readdir(join(deploy, ".plumb", "status")).catch(() => [])).some((n) => n.endsWith(".json")),
    );
  } catch (error) {
    throw new Error(`${(error as Error).message}\n${run.output()}`, { cause: error });
  } finally {
    run.child.kill("SIGKILL");
    await run.exited;
  }
  expect(await readdir(temp), run.output()).toEqual([]);
}, 60_000);
