import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api } from "../controller/support.js";
import { assertBuilt, runCliWithFileLimit } from "../support/built-cli.js";

// import --force replaces a file in the way whole or not at all. It wrote over it in place
// (truncate, then write): on a full disk the user's file was lost, cut to the first 4,096 bytes of
// the imported manifest, and the write's error (no path in it) was an internal error, exit 70. A file-size limit (ulimit -f, EFBIG) stands for the full disk, so the
// import runs in a child: the built CLI.

let cp: RunningControlPlane;
let out: string;

beforeAll(async () => {
  cp = await startControlPlane({ revisionSeconds: 0, deploymentReadySeconds: 0 });
  out = await mkdtemp(join(tmpdir(), "plumb-import-force-atomic-"));
});
afterAll(async () => {
  await cp?.stop();
  await rm(out, { recursive: true, force: true });
});

it("import --force that cannot write the whole file leaves the file in the way as it was", async () => {
  assertBuilt();
  // 120 secrets: the imported manifest (a valueFrom per secret) is over 4 KiB.
  const secrets = Array.from({ length: 120 }, (_, i) => ({ name: `SECRET_NUMBER_${i}`, value: "x" }));
  await api(cp.url).call("POST", "/v2/deployments", {
    name: "big",
    source: "internal_container",
    source_config: {},
    source_revision_config: { image_uri: "img/big:1" },
    secrets,
  });
  const mine = "# my own big.yaml, kept\n";
  await writeFile(join(out, "big.yaml"), mine);

  const env = { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY };
  const run = runCliWithFileLimit(4, ["import", "--out", out, "--force"], env);
  await expect(run).rejects.toMatchObject({ code: 1 });
  expect(await readFile(join(out, "big.yaml"), "utf8")).toBe(mine);
  expect(await readdir(out)).toEqual(["big.yaml"]);

  // A new file whose write fails is not left cut short either (nor an internal error, exit 70).
  await rm(join(out, "big.yaml"));
  const fresh = runCliWithFileLimit(4, ["import", "--out", out], env);
  await expect(fresh).rejects.toMatchObject({ code: 1 });
  await expect(fresh).rejects.toThrow("manifest-write-failed");
  expect(await readdir(out)).toEqual([]);
});
