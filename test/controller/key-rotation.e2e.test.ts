import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { fastControllerOptions } from "./harness.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";

// A long-running controller whose API key comes from a file (--api-key-file, an Environment's
// api_key: {file}, a mounted Secret) takes up a key rotated in that file without a restart: the
// control plane, granting only the new key from then on, answers the old one 401, and the
// controller reads the file again (docs/api-client.md "A rotated key"). Counted on the control plane.

const OLD = "old-rotated-key-0000000000";
const NEW = "new-rotated-key-1111111111";
const planeOptions = (key: string, dataDir: string) => ({
  revisionSeconds: 0.02,
  deploymentReadySeconds: 0,
  apiKeys: [{ key, tenants: [DEFAULT_TENANT_ID] }],
  dataDir,
  host: "127.0.0.1",
});

let dir: string;
let cp: RunningControlPlane | undefined;
let controller: Controller | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-key-rotation-"));
});
afterEach(async () => {
  await controller?.stop(1_000);
  await cp?.stop();
  await rm(dir, { recursive: true, force: true });
});

it("the controller reconciles on with the key rotated in its file, no restart", async () => {
  const manifests = join(dir, "manifests");
  const keyFile = join(dir, "api-key");
  await writeFile(keyFile, `${OLD}\n`);
  cp = await startControlPlane(planeOptions(OLD, join(dir, "data")));
  const url = cp.url;
  await writeDoc(manifests, "a.yaml", container("a", "img/a:1"));
  const log = memoryLogger();
  controller = await startController(
    fastControllerOptions(cp, {
      source: { kind: "dir", dir: manifests },
      api: { apiUrl: url, apiKey: OLD, apiKeyFile: keyFile, platformUrl: url },
      logger: log.logger,
    }),
  );
  await waitFor("a on the control plane", async () => (await api(url, OLD).deployments()).length === 1);

  // The key is rotated: the Secret's file holds the new one, the server accepts only that from now
  // on (the old one is revoked at run time, as plumb control-plane does on SIGHUP).
  await writeFile(keyFile, `${NEW}\n`);
  cp.setApiKeys([{ key: NEW, tenants: [DEFAULT_TENANT_ID] }]);
  expect((await fetch(`${url}/v2/deployments`, { headers: { "x-api-key": OLD } })).status).toBe(401);
  await writeDoc(manifests, "b.yaml", container("b", "img/b:1"));
  const client = api(url, NEW);
  await waitFor("b on the control plane, sent with the new key", async () =>
    (await client.deployments()).some((d) => d.name === "b"),
  );
  const deployments = await client.deployments();
  expect(deployments.map((d) => d.name).sort()).toEqual(["a", "b"]);
  for (const d of deployments) expect(await client.revisions(d.id)).toHaveLength(1);
  // Said once in the controller's log, naming the file and not the key.
  const taken = log.lines().filter((l) => /holds another key/.test(String(l.msg)));
  expect(taken).toEqual([expect.objectContaining({ file: keyFile })]);
  expect(log.text()).not.toContain(NEW);
  expect(log.text()).not.toContain(OLD);
});
