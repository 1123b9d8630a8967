import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { DEFAULT_TENANT_ID } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { fastControllerOptions } from "../controller/harness.js";
import { api, memoryLogger, waitFor } from "../controller/support.js";

// The controller and a server that puts the run's API key into a live field (as an image tag):
// --drift-branch writes drifted live values into git and pushes them, the status page shows each
// object's last plan, and the status branch keeps the records. Neither may carry the key (docs/security.md, "Live values").

const run = promisify(execFile);
const git = (cwd: string, ...args: string[]) =>
  run("git", ["-c", "user.name=t", "-c", "user.email=t@example.com", ...args], { cwd, maxBuffer: 64 << 20 });
const KEY = `cnry${randomBytes(10).toString("hex")}-apikey${randomBytes(10).toString("hex")}`;
const leaks = (text: string) => [KEY.slice(0, 12), KEY.slice(-12)].filter((n) => text.includes(n));

let tmp: string;
let bare: string;
let cp: RunningControlPlane;
let controller: Controller | undefined;
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-ctl-live-echo-"));
  bare = join(tmp, "manifests.git");
  const work = join(tmp, "work");
  await run("git", ["init", "--bare", "-b", "main", bare]);
  await run("git", ["clone", bare, work]);
  await git(work, "checkout", "-B", "main");
  await run("mkdir", ["-p", join(work, "deploy")]);
  const manifest =
    "apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: alpha\nspec:\n  source: internal_container\n  source_revision_config:\n    image_uri: img/alpha:1\n";
  await writeFile(join(work, "deploy", "alpha.yaml"), manifest);
  await git(work, "add", ".");
  await git(work, "commit", "-m", "first");
  await git(work, "push", "origin", "main");
  cp = await startControlPlane({
    revisionSeconds: 0.02,
    deploymentReadySeconds: 0,
    apiKeys: [{ key: KEY, tenants: [DEFAULT_TENANT_ID] }],
  });
}, 60_000);
afterAll(async () => {
  await controller?.stop(1_000);
  await cp?.stop();
  await rm(tmp, { recursive: true, force: true });
});

it("--drift-branch and the status page: the key a server put into a live field is not written, pushed or shown", async () => {
  const log = memoryLogger();
  controller = await startController(
    fastControllerOptions(cp, {
      api: { apiUrl: cp.url, apiKey: KEY, platformUrl: cp.url },
      source: {
        kind: "git",
        url: bare,
        branch: "main",
        path: "deploy",
        workDir: join(tmp, "checkout"),
        intervalMs: 3_600_000,
      },
      listen: { host: "127.0.0.1", port: 0 },
      driftBranch: "plumb-drift",
      statusBranch: "plumb-status",
      env: { PATH: process.env.PATH, HOME: process.env.HOME },
      logger: log.logger,
    }),
  );
  await waitFor("ready", () => controller!.ready());
  const alpha = await api(cp.url, KEY).deployment("alpha");
  await api(cp.url, KEY).call("PATCH", `/v2/deployments/${alpha.id}`, {
    source_revision_config: { image_uri: `img/alpha:${KEY}` },
  });
  await controller.checkDrift();
  const detail = async () =>
    (await (await fetch(`${controller!.url!}/ui/api/objects/Deployment/alpha`)).text()) ?? "";
  // The drift check queued a reconcile: its plan (the page's "last plan") shows the drift.
  const shown = await waitFor("the last plan shows the drift", async () => {
    const text = await detail();
    return text.includes("image_uri") && text.includes("[redacted]") ? text : null;
  });
  await controller.stop(1_000); // publishes the status branch
  const history = (await git(bare, "log", "-p", "--all", "--decorate")).stdout;
  expect(history).toContain("plumb-status");
  const channels = {
    history,
    shown,
    logs: log
      .lines()
      .map((l) => JSON.stringify(l))
      .join("\n"),
  };
  for (const [name, text] of Object.entries(channels)) expect(leaks(text), name).toEqual([]);
  expect(log.lines().some((l) => JSON.stringify(l).includes("drift"))).toBe(true);
}, 60_000);
