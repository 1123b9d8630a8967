import { mkdtemp, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gitrepo, start } from "./helpers.js";

// The control plane's --data directory holds what its tenants sent (deployments, agent-server
// threads and store items; secret values never, only names): its owner's only, whatever the umask,
// as a database's data directory (docs/control-plane.md "Durability (`--data DIR`)").

const modeOf = async (path: string) => (await stat(path)).mode & 0o777;

describe("the --data directory is its owner's only", () => {
  it("creates the directory 0700 and its files 0600, with a secret sent and after a restart", async () => {
    const parent = await mkdtemp(join(tmpdir(), "plumb-cp-modes-"));
    const dataDir = join(parent, "data");
    const umask = process.umask(0o022); // the common default: files 0644 and directories 0755 unless asked
    try {
      for (let round = 0; round < 2; round++) {
        const cp = await start({ dataDir });
        const created = await cp.call("POST", "/v2/deployments", {
          ...gitrepo(`modes-${round}`),
          secrets: [{ name: "TOKEN", value: "s3cret-value" }],
        });
        expect(created.status).toBe(201);
        await cp.cp.stop();
        expect(await modeOf(dataDir)).toBe(0o700);
        const files = await readdir(dataDir);
        const text = (await Promise.all(files.map((f) => readFile(join(dataDir, f), "utf8")))).join("\n");
        expect(text).toContain("TOKEN"); // the name is kept, the value never
        expect(text).not.toContain("s3cret-value");
        expect(files).toEqual(expect.arrayContaining(["state.json", "journal.ndjson"]));
        for (const file of files) expect([file, await modeOf(join(dataDir, file))]).toEqual([file, 0o600]);
      }
    } finally {
      process.umask(umask);
      await rm(parent, { recursive: true, force: true });
    }
  });

  it("makes the files of files an older plumb wrote under the umask (0644) its owner's only", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "plumb-cp-modes-"));
    try {
      await writeFile(join(dataDir, "state.json"), "", { mode: 0o644 });
      await writeFile(join(dataDir, "journal.ndjson"), "", { mode: 0o644 });
      const cp = await start({ dataDir });
      await cp.cp.stop();
      expect(await modeOf(join(dataDir, "state.json"))).toBe(0o600);
      expect(await modeOf(join(dataDir, "journal.ndjson"))).toBe(0o600);
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});
