import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api, container, writeDoc } from "../controller/support.js";
import { assertBuilt, runCli } from "../support/built-cli.js";

// A server that puts a secret into a deployment's live fields: the run's API key or a secret value
// it was sent as an image tag, as a hostile or compromised control plane (or a proxy rewriting its
// answers) could. plumb shows
// live values in plan and drift diffs and writes them back into git (drift --write): none of
// them may carry the key (docs/security.md, "Live values").

const run = promisify(execFile);
const KEY = `cnry${randomBytes(10).toString("hex")}-apikey${randomBytes(10).toString("hex")}`;
/** A secret value the run sends in `secrets` (from the environment), echoed back in a live field. */
const VALUE = `cnry${randomBytes(10).toString("hex")}-value${randomBytes(10).toString("hex")}`;

let tmp: string;
let cp: RunningControlPlane;

beforeAll(async () => {
  assertBuilt();
  tmp = await mkdtemp(join(tmpdir(), "plumb-live-echo-"));
  cp = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    apiKeys: [{ key: KEY, tenants: [DEFAULT_TENANT_ID] }],
  });
}, 60_000);
afterAll(async () => {
  await cp?.stop();
  await rm(tmp, { recursive: true, force: true });
});

const needles = (value: string) => [value.slice(0, 12), value.slice(-12)];
/** A registry password in a live URL: a credential the run does not know (no secret of it). */
const PASSWORD = `cnry${randomBytes(10).toString("hex")}-registrypw`;
const leaks = (text: string) =>
  [...needles(KEY), ...needles(VALUE), PASSWORD].filter((n) => text.includes(n));

describe("a live value holding the API key", () => {
  it("is shown by no plan, drift or status output, and drift --write does not write it to git", async () => {
    const dir = join(tmp, "deploy");
    await writeDoc(dir, "alpha.yaml", container("alpha", "img/alpha:1"));
    const secrets = { secrets: [{ name: "TOKEN", valueFrom: { env: "LEAK_VALUE" } }] };
    await writeDoc(dir, "beta.yaml", container("beta", "img/beta:1", secrets));
    await writeDoc(dir, "gamma.yaml", container("gamma", "img/gamma:1"));
    await run("git", ["init", "-q", "-b", "main"], { cwd: tmp });
    const env = { PLUMB_API_URL: cp.url, PLUMB_API_KEY: KEY, LEAK_VALUE: VALUE, HOME: tmp };
    const applied = await runCli(["apply", dir, "--yes"], env);
    expect(applied.code, applied.output).toBe(0);
    // The server's doing: each deployment's image tag is now a secret of the run.
    for (const [name, image] of [
      ["alpha", `img/alpha:${KEY}`],
      ["beta", `img/beta:${VALUE}`],
      ["gamma", `https://robot:${PASSWORD}@registry.example/img/gamma:2`],
    ] as const) {
      const live = await api(cp.url, KEY).deployment(name);
      await api(cp.url, KEY).call("PATCH", `/v2/deployments/${live.id}`, {
        source_revision_config: { image_uri: image },
      });
    }
    const outputs: Record<string, string> = {};
    for (const output of ["text", "json", "markdown"]) {
      outputs[`plan ${output}`] = (await runCli(["plan", dir, "--output", output], env)).output;
      outputs[`drift ${output}`] = (await runCli(["drift", dir, "--output", output], env)).output;
    }
    outputs.status = (await runCli(["status", dir, "--output", "json"], env)).output;
    outputs.diff = (await runCli(["diff", dir], env)).output;
    outputs["drift --write"] = (await runCli(["drift", dir, "--write"], env)).output;
    outputs.manifest = await readFile(join(dir, "alpha.yaml"), "utf8");
    outputs["beta manifest"] = await readFile(join(dir, "beta.yaml"), "utf8");
    outputs["gamma manifest"] = await readFile(join(dir, "gamma.yaml"), "utf8");
    const leaked = Object.entries(outputs).filter(([, text]) => leaks(text).length > 0);
    expect(leaked.map(([label, text]) => `${label}:\n${text}`)).toEqual([]);
    // Not vacuous: the drift was seen, shown redacted, and kept out of the files.
    expect(outputs["plan text"]).toContain('"img/alpha:[redacted]" → "img/alpha:1"');
    expect(outputs["drift text"]).toContain('"img/beta:[redacted]" → "img/beta:1"');
    expect(outputs.diff).toContain("-    image_uri: img/alpha:[redacted]"); // plumb diff's YAML of live
    expect(outputs["drift --write"]).toContain("it is never written to git");
    expect(outputs.manifest).toContain("image_uri: img/alpha:1");
    expect(outputs["beta manifest"]).toContain("image_uri: img/beta:1");
    expect(outputs["drift text"]).toContain(
      '"https://[redacted]@registry.example/img/gamma:2" → "img/gamma:1"',
    );
    expect(outputs["gamma manifest"]).toContain("image_uri: img/gamma:1");
  }, 120_000);
});
