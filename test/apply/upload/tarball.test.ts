import { execFileSync } from "node:child_process";
import { mkdtemp, readFile, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { SourceFile } from "../../../src/manifest/source/source-digest.js";
import { buildTarball } from "../../../src/apply/upload/tarball.js";

// GNU tar is the independent reader: what it extracts must be exactly what was packed.

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-tar-"));
});
afterEach(async () => rm(dir, { recursive: true, force: true }));

const file = (path: string, text: string | Buffer, mode: 0o644 | 0o755 = 0o644): SourceFile => ({
  path,
  mode,
  bytes: typeof text === "string" ? Buffer.from(text) : text,
});

const longPath = `${"deep/".repeat(40)}${"n".repeat(120)}.ts`;
const FILES = [
  file("src/agent.ts", "export const graph = 1;\n"),
  file("package.json", '{"name":"docs-agent"}'),
  file("bin/run.sh", "#!/bin/sh\necho hi\n", 0o755),
  file("empty.txt", ""),
  file(`a/${"p".repeat(120)}/short.txt`, "split into prefix and name"),
  file(longPath, "needs a pax header"),
  file("données/é.txt", "utf-8 names"),
  file("blob.bin", Buffer.from(Array.from({ length: 1500 }, (_, i) => i % 256))),
];

describe("buildTarball", () => {
  it("is a gzip ustar archive that GNU tar extracts to the same files and modes", async () => {
    const tarball = buildTarball(FILES);
    expect([tarball[0], tarball[1]]).toEqual([0x1f, 0x8b]);
    const archive = join(dir, "source.tar.gz");
    await writeFile(archive, tarball);
    const out = join(dir, "out");
    execFileSync("mkdir", [out]);
    execFileSync("tar", ["-xzf", archive, "-C", out]);
    for (const f of FILES) {
      expect(await readFile(join(out, f.path))).toEqual(Buffer.from(f.bytes));
      expect((await stat(join(out, f.path))).mode & 0o111 ? 0o755 : 0o644).toBe(f.mode);
    }
    const listed = execFileSync("tar", ["-tzf", archive], { encoding: "utf8" }).trim().split("\n");
    expect(listed.filter((p) => !p.endsWith("/")).sort()).toEqual(FILES.map((f) => f.path).sort());
    // Directories come before the files in them.
    expect(listed.indexOf("src/")).toBeLessThan(listed.indexOf("src/agent.ts"));
  });

  it("is deterministic: same files in any order give the same bytes, no timestamps or owners", () => {
    const a = buildTarball(FILES);
    expect(buildTarball([...FILES].reverse())).toEqual(a);
    const tar = gunzipSync(a);
    expect(tar.length % 512).toBe(0);
    // First header: mtime, uid and gid all zero.
    expect(tar.subarray(108, 116).toString()).toBe("0000000\0");
    expect(tar.subarray(136, 148).toString()).toBe("00000000000\0");
    expect(buildTarball([file("package.json", '{"name":"docs-agent!"}')])).not.toEqual(
      buildTarball([file("package.json", '{"name":"docs-agent"}')]),
    );
  });
});
