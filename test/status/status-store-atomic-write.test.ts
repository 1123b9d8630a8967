import { readdirSync } from "node:fs";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { writeRecordFile } from "../../src/status/write/write-atomically.js";

// A status record written atomically (temp file, data fsync, rename, directory fsync) leaves no
// file descriptor open behind it: the controller writes records all day, and a handle left open
// per write (the temp file's, or the directory's opened to fsync it) ran it out of descriptors.
// Counted in /proc/self/fd (Linux): unclosed FileHandles are closed only when collected.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-write-atomically-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const openDescriptors = () => readdirSync("/proc/self/fd").length;

describe("writeRecordFile", () => {
  it("writes the new text whole, owner-only, and leaves no temp file", async () => {
    const file = join(dir, "deployment.a.json");
    await writeRecordFile(file, '{"v":1}\n');
    await writeRecordFile(file, '{"v":2}\n');
    expect(await readFile(file, "utf8")).toBe('{"v":2}\n');
    expect(await readdir(dir)).toEqual(["deployment.a.json"]);
  });

  it.runIf(process.platform === "linux")("closes every descriptor it opens, write after write", async () => {
    await writeRecordFile(join(dir, "warm.json"), "{}\n"); // whatever the first call opens for good
    const before = openDescriptors();
    for (let i = 0; i < 50; i++) await writeRecordFile(join(dir, `deployment.d${i}.json`), `{"i":${i}}\n`);
    expect(openDescriptors()).toBe(before);
  });

  it("leaves no temp file when the rename fails, and says why", async () => {
    // The target is a non-empty directory: rename(2) refuses (EISDIR / ENOTEMPTY).
    const target = join(dir, "taken.json");
    await mkdir(target);
    await writeFile(join(target, "x"), "x");
    await expect(writeRecordFile(target, "{}\n")).rejects.toMatchObject({
      code: expect.stringMatching(/^E/),
    });
    expect((await readdir(dir)).filter((name) => name.endsWith(".tmp"))).toEqual([]);
  });
});
