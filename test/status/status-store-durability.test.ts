import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { anyFile, saveObjectStatus } from "../../src/status/write/save-records.js";
import { sampleStatus } from "../reconcile/fixtures.js";

// Node's fs, observed (every call is carried out on a real temp directory): what the status
// store asks of the file system, in order.
const calls = vi.hoisted(() => [] as string[]);
vi.mock("node:fs/promises", async (importOriginal) => {
  const real = await importOriginal<typeof import("node:fs/promises")>();
  return {
    ...real,
    rename: async (from: string, to: string) => {
      await real.rename(from, to);
      calls.push(`rename ${to}`);
    },
    open: async (path: string, ...rest: [string?, number?]) => {
      const handle = await real.open(path, ...rest);
      const sync = handle.sync.bind(handle);
      const datasync = handle.datasync.bind(handle);
      handle.sync = async () => (await sync(), void calls.push(`sync ${path}`));
      handle.datasync = async () => (await datasync(), void calls.push(`datasync ${path}`));
      return handle;
    },
  };
});

describe("status store durability", () => {
  it.skipIf(process.platform === "win32")(
    "fsyncs the record, renames it into place, then fsyncs the directory",
    async () => {
      const dir = join(await mkdtemp(join(tmpdir(), "plumb-durable-")), "status");
      await saveObjectStatus(dir, sampleStatus("alpha"), anyFile);
      calls.length = 0;
      await saveObjectStatus(dir, sampleStatus("alpha", { health: "Degraded" }), anyFile);
      const record = join(dir, "deployment.alpha.json");
      expect(calls.map((c) => c.replace(/\.[0-9]+\.[0-9a-f]+\.tmp$/, ".tmp"))).toEqual([
        `datasync ${record}.tmp`,
        `rename ${record}`,
        `sync ${dir}`,
      ]);
    },
  );
});
