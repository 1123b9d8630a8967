import type { ChildProcess } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { startControlPlane } from "../../src/control-plane/server.js";
import { assertBuilt, spawnCli } from "../support/built-cli.js";
import { gitrepo, start } from "./helpers.js";

// Runs the real `plumb control-plane --data DIR` in a child process (the built CLI, test/support/
// built-cli.ts: about a third less CPU per start than the TypeScript sources through a loader),
// kills it with SIGKILL mid-stream, restarts it and checks every acknowledged write.

const children: ChildProcess[] = [];
beforeAll(assertBuilt);
afterAll(() => children.forEach((c) => c.kill("SIGKILL")));

async function launch(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const run = spawnCli(["control-plane", "--port", "0", "--data", dataDir, "--revision-seconds", "0"], {
    PLUMB_LOG_LEVEL: "warn",
  });
  const { child } = run;
  children.push(child);
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout?.on("data", () => {
      const match = /listening on (http:\/\/\S+)/.exec(run.output());
      if (match?.[1]) resolve(match[1]);
    });
    child.once("exit", (code) => reject(new Error(`control plane exited with ${code}: ${run.output()}`)));
  });
  return { child, url };
}

const headers = { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" };
const ENOUGH = 100;

describe("durability with --data", () => {
  it("keeps every acknowledged write across kill -9 at an arbitrary moment", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "plumb-cp-"));
    try {
      const first = await launch(dataDir);
      const acknowledged = new Map<string, { id: string; latest: string }>();
      let stop = false;
      let reached!: () => void;
      const enough = new Promise<void>((resolve) => {
        reached = resolve;
      });
      const writer = async (worker: number) => {
        for (let i = 0; !stop; i++) {
          const name = `w${worker}-d${i}`;
          try {
            const r = await fetch(`${first.url}/v2/deployments`, {
              method: "POST",
              headers,
              body: JSON.stringify(gitrepo(name)),
            });
            if (r.status !== 201) continue;
            const d = (await r.json()) as { id: string; latest_revision_id: string };
            acknowledged.set(name, { id: d.id, latest: d.latest_revision_id });
            if (acknowledged.size >= ENOUGH) reached();
            const p = await fetch(`${first.url}/v2/deployments/${d.id}`, {
              method: "PATCH",
              headers,
              body: JSON.stringify({ source_revision_config: { repo_ref: `r${i}` } }),
            });
            if (p.status === 200)
              acknowledged.set(name, {
                id: d.id,
                latest: ((await p.json()) as { latest_revision_id: string }).latest_revision_id,
              });
          } catch {
            return; // the server died under us: this write was never acknowledged
          }
        }
      };
      // Kill once a good number of writes were acknowledged, while the writers still have
      // requests in flight: what the journal holds at that instant is all there is.
      const writers = [0, 1, 2, 3].map(writer);
      await Promise.race([enough, Promise.all(writers)]); // writers only end early if the server died
      first.child.kill("SIGKILL");
      stop = true;
      await Promise.all(writers);
      expect(acknowledged.size).toBeGreaterThanOrEqual(ENOUGH);

      const second = await launch(dataDir);
      const check = async ([name, want]: [string, { id: string; latest: string }]) => {
        const r = await fetch(`${second.url}/v2/deployments/${want.id}`, { headers });
        expect(r.status, name).toBe(200);
        expect(((await r.json()) as { name: string }).name).toBe(name);
        // A PATCH applied but unanswered at the kill may follow; the acknowledged revision is kept.
        const revision = await fetch(`${second.url}/v2/deployments/${want.id}/revisions/${want.latest}`, {
          headers,
        });
        expect(revision.status, name).toBe(200);
      };
      const all = [...acknowledged];
      for (let i = 0; i < all.length; i += 16) await Promise.all(all.slice(i, i + 16).map(check));
      second.child.kill("SIGTERM");
      await new Promise((r) => second.child.once("exit", r));
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("restart in-process", () => {
  it("restores deployments, revisions, uploads and tracing projects from the compacted snapshot", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "plumb-cp-"));
    try {
      const one = await start({ dataDir });
      const d = (await one.call("POST", "/v2/deployments", gitrepo("kept"))).body;
      const patched = (
        await one.call("PATCH", `/v2/deployments/${d.id}`, { secrets: [{ name: "B", value: "2" }] })
      ).body;
      await one.cp.stop();
      for (let round = 0; round < 2; round++) {
        const again = await startControlPlane({ dataDir, revisionSeconds: 0 });
        const got = await fetch(`${again.url}/v2/deployments/${d.id}`, { headers });
        const body = (await got.json()) as {
          latest_revision_id: string;
          secrets: unknown[];
          source_config: { custom_url: string };
        };
        expect(body.latest_revision_id).toBe(patched.latest_revision_id);
        expect(body.secrets).toEqual([{ name: "B", value: "********" }]);
        expect(body.source_config.custom_url).toBe(`${again.url}/agents/${d.id}`);
        const projects = await fetch(`${again.url}/api/v1/sessions?name=kept`, { headers });
        expect(await projects.json()).toHaveLength(1);
        await again.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
