import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { mkdir, symlink, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:net";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { PlumbError } from "../../src/errors.js";
import { loadManifests, loadManifestsInSlices } from "../../src/manifest/load.js";
import { readManifestText } from "../../src/manifest/parse/read-file.js";
import { useTempRoots } from "./helpers.js";

// What a manifest tree may hold besides files and directories, as a user or a hostile repository
// puts it there: symlink loops, FIFOs and sockets named *.yaml, names that are not UTF-8, and files
// that change between the listing and the read. Each is said, naming the file, and never blocks or
// ends the whole load (docs/manifests.md, "Files and YAML").

const t = useTempRoots("plumb-entries-");
const deployment = (name: string) =>
  `apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: ${name}\nspec:\n  source: internal_container\n  source_revision_config: {image_uri: "img/${name}:1"}\n`;

const sockets: Server[] = [];
afterEach(async () => {
  await Promise.all(sockets.splice(0).map((s) => new Promise((done) => s.close(done))));
});
/** A Unix socket bound at `path` (a socket file), closed after the test. */
const socketAt = async (path: string) => {
  const server = createServer();
  sockets.push(server);
  await new Promise<void>((done) => server.listen(path, done));
};
const fifo = (path: string) => execFileSync("mkfifo", [path]);

const shown = (problems: readonly { file: string; severity: string; code: string }[]) =>
  problems.map((p) => `${p.file} ${p.severity} ${p.code}`);

/** The three ways a tree is loaded: a command's (parallel), the controller's (async, in slices). */
async function everyLoad(root: string) {
  const command = await loadManifests(root, { parallel: true });
  const plain = await loadManifests(root);
  const sliced = await loadManifestsInSlices(root, { maxFileBytes: Infinity, sliceMs: 5 });
  return { command, plain, sliced };
}

describe("symlink loops", () => {
  it("a link to itself, two links to each other and a looping directory link are loops, not missing targets", async () => {
    await t.put("a.yaml", deployment("a"));
    await symlink("self.yaml", join(t.root, "self.yaml"));
    await symlink("two.yaml", join(t.root, "one.yaml"));
    await symlink("one.yaml", join(t.root, "two.yaml"));
    await symlink("teams", join(t.root, "teams")); // meant as a directory of manifests
    await symlink("nothing.yaml", join(t.root, "dangling.yaml"));
    await symlink("nothing", join(t.root, "dangling-dir")); // not a YAML name: not plumb's concern
    const { manifests, problems } = await loadManifests(t.root);
    expect(manifests.map((m) => m.manifest.metadata.name)).toEqual(["a"]);
    expect(shown(problems)).toEqual([
      "dangling.yaml warning broken-symlink",
      "one.yaml warning symlink-loop",
      "self.yaml warning symlink-loop",
      "teams warning symlink-loop",
      "two.yaml warning symlink-loop",
    ]);
    const loop = problems.find((p) => p.file === "self.yaml")!;
    expect(loop.message).toContain("ELOOP");
    expect(loop.message).toMatch(/remove it/);
    expect(loop.message).not.toContain("does not exist");
  });

  it("a directory link to an ancestor is read once, quietly: no loop is reported, nothing twice", async () => {
    await t.put("team/a.yaml", deployment("a"));
    await symlink("..", join(t.root, "team", "up"));
    await symlink(join(t.root, "team"), join(t.root, "team", "here"));
    const { manifests, problems } = await loadManifests(t.root);
    expect(problems).toEqual([]);
    expect(manifests.map((m) => m.file)).toEqual(["team/a.yaml"]);
  });

  it("a manifest path that is a loop says so, not that it does not exist", async () => {
    await symlink("loop.yaml", join(t.root, "loop.yaml"));
    await expect(loadManifests(join(t.root, "loop.yaml"))).rejects.toSatisfy(
      (e) =>
        e instanceof PlumbError && e.code === "path-unreadable" && e.message.includes("symlink loop (ELOOP)"),
    );
  });
});

describe("symlinks to what the walk never reads", () => {
  const TOKEN = "c2VjcmV0LXRva2VuLTEyMzQ1";
  const CONFIG = `[core]\n\tbare = false\n[http "https://github.com/"]\n\textraheader = AUTHORIZATION: basic ${TOKEN}\n`;

  it("a YAML link to .git/config or .env is an error, never read: its secrets are not quoted in YAML errors", async () => {
    await t.put("a.yaml", deployment("a"));
    await t.put(".git/config", CONFIG); // where a CI checkout keeps the token it fetched with
    await t.put(".env", `API_KEY: [${TOKEN}\n`);
    await t.put("real/b.yml", deployment("b"));
    await t.put("node_modules/pkg/c.yaml", deployment("c"));
    await symlink(".git/config", join(t.root, "leak.yaml"));
    await symlink(".env", join(t.root, "env.yaml"));
    await symlink("real/b.yml", join(t.root, "b-link.yaml")); // a manifest: read
    await symlink("node_modules/pkg", join(t.root, "tools")); // into node_modules: skipped quietly
    const loads = await everyLoad(t.root);
    for (const { manifests, problems } of [loads.command, loads.plain, loads.sliced as typeof loads.plain]) {
      // b is read twice, through the link and as itself: a duplicate-name, as before
      expect(manifests.map((m) => `${m.file} ${m.manifest.metadata.name}`)).toEqual([
        "a.yaml a",
        "b-link.yaml b",
      ]);
      expect(problems.filter((p) => p.code !== "duplicate-name").map((p) => `${p.file} ${p.code}`)).toEqual([
        "env.yaml symlink-to-skipped",
        "leak.yaml symlink-to-skipped",
      ]);
      expect(JSON.stringify(problems)).not.toContain(TOKEN);
    }
  });

  it("such a link named as PATH is refused the same way", async () => {
    await t.put(".git/config", CONFIG);
    await symlink(".git/config", join(t.root, "leak.yaml"));
    const { problems } = await loadManifests(join(t.root, "leak.yaml"));
    expect(shown(problems)).toEqual(["leak.yaml error symlink-to-skipped"]);
    expect(JSON.stringify(problems)).not.toContain(TOKEN);
  });
});

describe("entries that are not regular files", () => {
  it("a FIFO, a socket, and links to them, named *.yaml: each a warning naming it, never opened", async () => {
    await t.put("a.yaml", deployment("a"));
    await mkdir(join(t.root, "team"));
    fifo(join(t.root, "team", "pipe.yaml"));
    await socketAt(join(t.root, "sock.yml"));
    await symlink("team/pipe.yaml", join(t.root, "to-pipe.yaml"));
    fifo(join(t.root, "other-pipe")); // not a YAML name: skipped quietly, as any other file
    const loads = await everyLoad(t.root);
    for (const { manifests, problems } of [loads.command, loads.plain, loads.sliced as typeof loads.plain]) {
      expect(manifests.map((m) => m.manifest.metadata.name)).toEqual(["a"]);
      expect(shown(problems)).toEqual([
        "sock.yml warning not-regular-file",
        "team/pipe.yaml warning not-regular-file",
        "to-pipe.yaml warning not-regular-file",
      ]);
      expect(problems.map((p) => p.message)).toEqual([
        "a socket, not a regular file: skipped, not read; a manifest must be a regular file",
        "a FIFO (named pipe), not a regular file: skipped, not read; a manifest must be a regular file",
        "a FIFO (named pipe), not a regular file: skipped, not read; a manifest must be a regular file",
      ]);
    }
  });

  it("a directory named x.yaml is a directory: its files are read, and it is no problem", async () => {
    await t.put("apps.yaml/a.yaml", deployment("a"));
    await t.put("apps.yaml/notes.txt", "not read");
    const { manifests, problems } = await loadManifests(t.root);
    expect(problems).toEqual([]);
    expect(manifests.map((m) => m.file)).toEqual(["apps.yaml/a.yaml"]);
  });

  it("a FIFO as the manifest path is refused at once with what it is", async () => {
    fifo(join(t.root, "pipe.yaml"));
    // A writer holds it open (O_RDWR does not wait on Linux), so a blocking open would not hang here.
    const writer = openSync(join(t.root, "pipe.yaml"), constants.O_RDWR);
    try {
      await expect(loadManifests(join(t.root, "pipe.yaml"))).rejects.toSatisfy(
        (e) =>
          e instanceof PlumbError &&
          e.code === "path-unreadable" &&
          e.message.endsWith(
            "pipe.yaml is a FIFO (named pipe), not a directory or a regular file; give the manifests' directory or file",
          ),
      );
    } finally {
      closeSync(writer);
    }
  });
});

describe("names", () => {
  it("a name that is not UTF-8 is reported, not read, and the rest of the tree loads", async () => {
    await t.put("a.yaml", deployment("a"));
    const raw = Buffer.from(t.root + "/");
    const name = (bytes: number[], rest: string) =>
      Buffer.concat([raw, Buffer.from("bad"), Buffer.from(bytes), Buffer.from(rest)]);
    await mkdir(name([0xfe], "-dir"));
    await t.put(`bad\ufffd-real.yaml`, deployment("c")); // a real U+FFFD: an ordinary name
    await writeFile(name([0xff], ".yaml"), deployment("b")); // fs takes a path as bytes
    const loads = await everyLoad(t.root);
    for (const { manifests, problems } of [loads.command, loads.plain, loads.sliced as typeof loads.plain]) {
      expect(manifests.map((m) => m.manifest.metadata.name)).toEqual(["a", "c"]);
      expect(shown(problems)).toEqual([
        "bad\ufffd-dir error unprintable-name",
        "bad\ufffd.yaml error unprintable-name",
      ]);
    }
  });

  it("a bidirectional override in a name is escaped like a control character", async () => {
    await t.put("a.yaml", deployment("a"));
    await t.put("x\u202egnp.yaml", deployment("b"));
    const { manifests, problems } = await loadManifests(t.root);
    expect(manifests.map((m) => m.manifest.metadata.name)).toEqual(["a"]);
    expect(shown(problems)).toEqual(["x\\u202egnp.yaml error unprintable-name"]);
  });

  it("names differing only by case are two files, both read, in byte order", async () => {
    await t.put("A.yaml", deployment("upper"));
    await t.put("a.YAML", deployment("lower"));
    const { manifests, problems } = await loadManifests(t.root);
    expect(problems).toEqual([]);
    expect(manifests.map((m) => m.file)).toEqual(["A.yaml", "a.YAML"]);
  });
});

describe("a file changed between the listing and the read", () => {
  const read = (name: string) =>
    readManifestText({ path: join(t.root, name), real: join(t.root, name) }, t.root, t.root, 1 << 20);
  const problemOf = (name: string) => {
    const result = read(name);
    if (typeof result === "symbol" || !("problems" in result)) throw new Error(`read ${name} as text`);
    return result.problems.map((p) => `${p.file} ${p.severity} ${p.code}: ${p.message}`);
  };

  it("removed: an error that says so, not a thrown ENOENT", () => {
    expect(problemOf("gone.yaml")).toEqual([
      "gone.yaml error manifest-unreadable: file cannot be read: was removed while plumb read the tree: run again",
    ]);
  });

  it("replaced by a symlink: refused, not followed", async () => {
    await t.put("target.yaml", deployment("a"));
    await symlink("target.yaml", join(t.root, "swapped.yaml"));
    expect(problemOf("swapped.yaml")).toEqual([
      "swapped.yaml error manifest-unreadable: file cannot be read: became a symlink while plumb read the tree: run again",
    ]);
  });

  it("replaced by a directory, a FIFO or a socket: not a regular file, never read", async () => {
    await mkdir(join(t.root, "dir.yaml"));
    fifo(join(t.root, "pipe.yaml"));
    await socketAt(join(t.root, "sock.yaml"));
    // A writer holds the FIFO open (O_RDWR does not wait on Linux): a blocking open would not block
    // either, and the read would see an empty file; either way the FIFO is no manifest.
    const writer = openSync(join(t.root, "pipe.yaml"), constants.O_RDWR);
    try {
      expect([...problemOf("dir.yaml"), ...problemOf("pipe.yaml"), ...problemOf("sock.yaml")]).toEqual([
        "dir.yaml warning not-regular-file: a directory, not a regular file: skipped, not read; a manifest must be a regular file",
        "pipe.yaml warning not-regular-file: a FIFO (named pipe), not a regular file: skipped, not read; a manifest must be a regular file",
        "sock.yaml warning not-regular-file: a socket, not a regular file: skipped, not read; a manifest must be a regular file",
      ]);
    } finally {
      closeSync(writer);
    }
  });
});

describe("many directories", () => {
  it("a tree of 2,000 empty directories and one manifest deep down loads", async () => {
    const deep = Array.from({ length: 40 }, (_, i) => `d${i}`).join("/");
    await t.put(`${deep}/a.yaml`, deployment("a"));
    for (let i = 0; i < 50; i++)
      await mkdir(join(t.root, `wide-${i}`, ...Array.from({ length: 39 }, () => "e")), { recursive: true });
    const { manifests, problems } = await loadManifests(t.root);
    expect(problems).toEqual([]);
    expect(manifests.map((m) => m.file)).toEqual([`${deep}/a.yaml`]);
  });

  // Each directory's realpath call lstat'ed every component of its path: 1,000 nested directories
  // cost ~10 s of CPU per load here (2,100 took validate 2 min 40 s), now ~0.1 s. CPU time, not
  // wall time (test/support/cpu-time.ts): a loaded machine does not make it fail.
  it("1,000 nested directories load in linear time, both ways (commands and controller)", async () => {
    const nested = Array.from({ length: 1000 }, () => "x");
    await mkdir(join(t.root, ...nested), { recursive: true });
    await t.put(`${nested.join("/")}/a.yaml`, deployment("deep"));
    const before = process.cpuUsage();
    const loads = [await loadManifests(t.root, { parallel: true }), await loadManifests(t.root)];
    const used = process.cpuUsage(before);
    for (const { manifests, problems } of loads) {
      expect(problems).toEqual([]);
      expect(manifests.map((m) => m.manifest.metadata.name)).toEqual(["deep"]);
    }
    expect((used.user + used.system) / 1000).toBeLessThan(3_000);
  });
});
