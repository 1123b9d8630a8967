import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Controller, startController } from "../../src/controller/controller.js";
import { redactUrl } from "../../src/git/git-source.js";
import { signBody } from "../../src/controller/source/webhook.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { api, container, memoryLogger, waitFor, writeDoc } from "./support.js";
import { gitIn, manifestRemote } from "../support/git-clones.js";

let tmp: string;
let bare: string;
let work: string;
let cp: RunningControlPlane;
let controller: Controller | undefined;

beforeEach(async () => {
  tmp = await mkdtemp(join(tmpdir(), "plumb-ctl-git-"));
  let push: (message: string) => Promise<void>;
  ({ bare, work, push } = await manifestRemote(tmp));
  await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:1"));
  await writeDoc(join(work, "deploy"), "b.yaml", container("beta", "img/beta:1"));
  await writeDoc(work, "README.md", "not a manifest\n");
  await push("first");
  cp = await startControlPlane({ revisionSeconds: 0.02, deploymentReadySeconds: 0 });
});
afterEach(async () => {
  await controller?.stop(1_000);
  controller = undefined;
  await cp.stop();
  // A fetch the stop ended may still be taking its git processes down (stoppable-git.ts: up to 2 s).
  await rm(tmp, { recursive: true, force: true, maxRetries: 30, retryDelay: 100 });
});

describe("controller following a git branch", () => {
  it("applies the branch, then a pushed change after a signed webhook; a bad signature fetches nothing", async () => {
    const log = memoryLogger();
    controller = await startController({
      source: {
        kind: "git",
        url: bare,
        branch: "main",
        path: "deploy",
        workDir: join(tmp, "checkout"),
        intervalMs: 3_600_000,
      },
      api: { apiUrl: cp.url, apiKey: DEFAULT_API_KEY, platformUrl: cp.url },
      listen: { host: "127.0.0.1", port: 0 },
      webhookSecret: "hook-secret",
      selfHeal: false,
      concurrency: 4,
      debounceMs: 10,
      backoffBaseMs: 50,
      backoffMaxMs: 200,
      timeoutMs: 10_000,
      pollIntervalMs: 10,
      maxPollIntervalMs: 50,
      env: { PATH: process.env.PATH, HOME: process.env.HOME, PLUMB_GIT_TOKEN: "ghp_never-logged" },
      logger: log.logger,
    });
    await waitFor("ready", () => controller!.ready());
    const first = controller.status();
    expect(first.source.commit).toMatch(/^[0-9a-f]{40}$/);
    expect(first.objects.map((o) => [o.name, o.sync, o.git_commit])).toEqual([
      ["alpha", "Synced", first.source.commit],
      ["beta", "Synced", first.source.commit],
    ]);
    const client = api(cp.url);
    const beta = await client.deployment("beta");

    await writeDoc(join(work, "deploy"), "a.yaml", container("alpha", "img/alpha:2"));
    await gitIn(work, "commit", "-am", "alpha 2");
    await gitIn(work, "push", "origin", "main");
    const pushed = (await gitIn(work, "rev-parse", "HEAD")).stdout.trim();
    const body = JSON.stringify({ ref: "refs/heads/main", after: pushed });
    const hook = (signature: string) =>
      fetch(`${controller!.url}/hooks/git`, {
        method: "POST",
        headers: { "x-hub-signature-256": signature },
        body,
      });

    expect((await hook(signBody("not-the-secret", body))).status).toBe(401);
    expect(controller.status().source.commit).toBe(first.source.commit);

    expect((await hook(signBody("hook-secret", body))).status).toBe(202);
    await waitFor("alpha updated from the push", async () => {
      const d = await client.deployment("alpha");
      return d.source_revision_config.image_uri === "img/alpha:2";
    });
    await waitFor("alpha recorded at the pushed commit", () =>
      controller!
        .status()
        .objects.find((o) => o.name === "alpha" && o.git_commit === pushed && o.sync === "Synced"),
    );
    expect(controller.status().source.commit).toBe(pushed);
    // The status page's header names the repository, the branch and the commit.
    const header = (await (await fetch(`${controller.url}/ui/api/header`)).json()) as {
      source: { kind: string; location: string; commit: string };
    };
    expect(header.source).toEqual({ kind: "git", location: `${first.source.location}@main`, commit: pushed });
    expect((await client.revisions(beta.id)).length).toBe(1); // beta did not change: not reconciled
    // The in-memory status leads; the settled record reaches disk on the book's next flush.
    const recordFile = join(tmp, "checkout", "deploy", ".plumb", "status", "deployment.alpha.json");
    await waitFor("alpha's settled record on disk", async () => {
      const record = JSON.parse(await readFile(recordFile, "utf8"));
      return record.git_commit === pushed && record.sync === "Synced";
    });
    const record = JSON.parse(await readFile(recordFile, "utf8"));
    expect(record).toMatchObject({ name: "alpha", git_commit: pushed, sync: "Synced" });
    expect(log.text()).not.toContain("ghp_never-logged");
  });

  it("never shows URL credentials", () => {
    expect(redactUrl("https://user:tok3n@git.example.com/acme/m.git")).toBe(
      "https://****@git.example.com/acme/m.git",
    );
    expect(redactUrl("https://git.example.com/acme/m.git")).toBe("https://git.example.com/acme/m.git");
  });
});
