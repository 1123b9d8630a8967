import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { startController } from "../../../src/controller/controller.js";
import { acquireStateLock } from "../../../src/lock/index.js";
import { formatObjectStatus } from "../../../src/status/status-store.js";
import { freePort } from "../../support/free-port.js";
import { gitIn } from "../../support/git-clones.js";
import { waitFor, writeDoc } from "../support.js";
import { environmentOptions, useEnvironmentsHarness, writeTree } from "./fixture.js";

// The status page's deployment × environment matrix reads the store of an environment led by
// another replica from disk. A record committed to git in that store is not one any plumb wrote
// (docs/status.md "Records are state, never manifests"): the matrix must not show it as prod's.

const run = promisify(execFile);
const h = useEnvironmentsHarness("plumb-ctl-matrix-tracked-");

it("the matrix shows no record git tracks in the store of an environment led elsewhere", async () => {
  await writeTree(h);
  const forged = formatObjectStatus({
    kind: "Deployment",
    name: "alpha",
    id: "00000000-0000-0000-0000-00000000f0f0",
    latest_revision_id: null,
    active_revision_id: null,
    revision_status: null,
    sync: "Synced",
    health: "Healthy",
    git_commit: null,
    manifest_digest: null,
    secret_fingerprints: null,
    applied_spec: { source_revision_config: { image_uri: "img/alpha:committed" } },
    updated_at: "2031-01-01T00:00:00.000Z",
    last_error: null,
  });
  await writeDoc(join(h.dir, ".plumb", "status", "prod"), "deployment.alpha.json", forged);
  await run("git", ["init", "-q", "-b", "main", h.dir]);
  await gitIn(h.dir, "add", "-A", "--force");
  await gitIn(h.dir, "commit", "-qm", "the tree, and prod's store");
  // prod is led elsewhere (its lock held): this replica reads prod's store from disk for the matrix.
  const held = await acquireStateLock(
    { statusDir: join(h.dir, ".plumb", "status", "prod") },
    { command: "plumb apply" },
  );
  const port = await freePort();
  try {
    const controller = await startController(environmentOptions(h, { listen: { host: "127.0.0.1", port } }));
    h.controllers.push(controller);
    await waitFor("staging leads", () => controller.ready(), 20_000);
    const matrix = (await (await fetch(`http://127.0.0.1:${port}/ui/api/matrix`)).json()) as {
      environments: string[];
      rows: Array<{ deployment: string; cells: Array<{ version: string | null } | null> }>;
    };
    expect(matrix.environments).toEqual(["prod", "staging"]);
    const alpha = matrix.rows.find((r) => r.deployment === "alpha");
    expect(alpha?.cells[0]?.version ?? null).toBeNull();
    expect(alpha?.cells[1]?.version).toBe("img/alpha:1");
  } finally {
    await held.release();
  }
}, 60_000);
