import { execFileSync } from "node:child_process";
import { closeSync, constants, openSync } from "node:fs";
import { chmod, link, mkdir, realpath, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PlumbError } from "../../../src/errors.js";
import { loadManifests } from "../../../src/manifest/load.js";
import { digestSource, shortDigest, type SourceFile } from "../../../src/manifest/source/source-digest.js";
import { readSourceTree } from "../../../src/manifest/source/source-tree.js";
import { readListedFile } from "../../../src/manifest/source/read-listed-files.js";
import { useTempRoots } from "../helpers.js";
import type { LoadedManifest } from "../../../src/manifest/types.js";
import type { DeploymentManifest } from "../../../src/schema/manifest.js";

const t = useTempRoots("plumb-source-");
const { put } = t;

async function load(sourcePath = "../agent", extra = ""): Promise<LoadedManifest<DeploymentManifest>> {
  await put(
    "team/docs.yaml",
    `apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: docs}\nspec:\n  source: internal_source\n  source_path: ${sourcePath}\n  source_revision_config: {graph_config_path: langgraph.json}\n${extra}`,
  );
  const { manifests, problems } = await loadManifests(t.root);
  expect(problems).toEqual([]);
  return manifests[0] as LoadedManifest<DeploymentManifest>;
}

const failure = async (promise: Promise<unknown>, code = "source-unreadable"): Promise<PlumbError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlumbError);
  expect((error as PlumbError).code).toBe(code);
  return error as PlumbError;
};
const unsafe = (promise: Promise<unknown>) => failure(promise, "source-unsafe-entry");

const file = (path: string, text: string, mode: 0o644 | 0o755 = 0o644): SourceFile => ({
  path,
  mode,
  bytes: Buffer.from(text),
});

describe("digestSource", () => {
  const base = [file("package.json", "{}"), file("src/agent.ts", "export {}")];

  it("is sha256 over sorted paths, modes, sizes and contents; listing order does not matter", () => {
    const digest = digestSource(base);
    expect(digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(digestSource([...base].reverse())).toBe(digest);
  });

  it("changes with a content byte, a path, the mode, or a moved boundary between path and content", () => {
    const digest = digestSource(base);
    expect(digestSource([file("package.json", "{ }"), base[1]!])).not.toBe(digest);
    expect(digestSource([file("package.json", "{}"), file("src/agent.js", "export {}")])).not.toBe(digest);
    expect(digestSource([file("package.json", "{}", 0o755), base[1]!])).not.toBe(digest);
    expect(digestSource([file("a", "bc")])).not.toBe(digestSource([file("ab", "c")]));
  });

  it("is shortened for display", () => {
    expect(shortDigest(`sha256:${"ab".repeat(32)}`)).toBe("sha256:abababababab…");
  });
});

describe("readSourceTree", () => {
  it("reads every file under source_path, relative to the manifest, skipping .git, node_modules and .plumb", async () => {
    await put("agent/package.json", "{}");
    await put("agent/src/agent.ts", "export const graph = 1;\n");
    await put("agent/bin/run.sh", "#!/bin/sh\n");
    await chmod(join(t.root, "agent/bin/run.sh"), 0o700);
    await put("agent/.git/HEAD", "ref: refs/heads/main\n");
    await put("agent/node_modules/x/index.js", "");
    await put("agent/src/node_modules/y/index.js", "");
    await put("agent/.plumb/status/x.json", "{}");
    const tree = await readSourceTree(await load(), { root: t.root, withBytes: true });
    expect(tree.files.map((f) => `${f.path} ${f.mode.toString(8)}`)).toEqual([
      "bin/run.sh 755",
      "package.json 644",
      "src/agent.ts 644",
    ]);
    expect(tree.size).toBe(2 + 24 + 10);
    expect(tree.digest).toBe(digestSource(tree.files));
    // Without bytes (plan): the same digest, nothing held.
    const light = await readSourceTree(await load(), { root: t.root });
    expect([light.digest, light.files.length]).toEqual([tree.digest, 0]);
    // Ignored directories and timestamps are not content.
    await put("agent/node_modules/x/index.js", "changed");
    expect((await readSourceTree(await load(), { root: t.root })).digest).toBe(tree.digest);
    await put("agent/src/agent.ts", "export const graph = 2;\n");
    expect((await readSourceTree(await load(), { root: t.root })).digest).not.toBe(tree.digest);
  });

  it("follows symlinks that stay inside the source directory", async () => {
    await put("agent/shared/prompt.txt", "be brief");
    await put("agent/package.json", "{}");
    await symlink(join(t.root, "agent/shared/prompt.txt"), join(t.root, "agent/prompt.txt"));
    await symlink("shared", join(t.root, "agent/linked"));
    const tree = await readSourceTree(await load(), { root: t.root, withBytes: true });
    expect(tree.files.map((f) => f.path)).toEqual(["linked/prompt.txt", "package.json", "prompt.txt"]);
    expect(tree.listing).toEqual([
      { path: "linked/prompt.txt", size: 8 },
      { path: "package.json", size: 2 },
      { path: "prompt.txt", size: 8 },
    ]);
  });

  it("refuses symlinks out of the root or the source directory, with file:line:col", async () => {
    await put("agent/package.json", "{}");
    const loaded = await load();
    const linked = await load("../linked");
    await writeFile(join(t.outside, "key.txt"), "secret");
    await symlink(join(t.outside, "key.txt"), join(t.root, "agent/key.txt"));
    const error = await unsafe(readSourceTree(loaded, { root: t.root }));
    expect(error.message).toBe(
      "team/docs.yaml:6:3: source_path agent/key.txt is a symlink that leads outside the manifest root; remove it, or copy what it needs into agent",
    );
    await rm(join(t.root, "agent/key.txt"));
    await symlink(t.outside, join(t.root, "agent/escape"));
    expect((await unsafe(readSourceTree(loaded, { root: t.root }))).message).toContain(
      "source_path agent/escape is a symlink that leads outside the manifest root",
    );
    await rm(join(t.root, "agent/escape"));
    // Inside the root but outside the source directory: refused too.
    await put("shared/prompt.txt", "be brief");
    await symlink("../shared/prompt.txt", join(t.root, "agent/prompt.txt"));
    expect((await unsafe(readSourceTree(loaded, { root: t.root }))).message).toContain(
      "source_path agent/prompt.txt is a symlink that leaves agent;",
    );
    await rm(join(t.root, "agent/prompt.txt"));
    await symlink(t.outside, join(t.root, "linked"));
    expect((await failure(readSourceTree(linked, { root: t.root }))).message).toBe(
      "team/docs.yaml:6:3: source_path linked leads outside the manifest root through a symlink",
    );
  });

  it("says clearly when the directory is missing, not a directory, empty or too big", async () => {
    expect((await failure(readSourceTree(await load(), { root: t.root }))).message).toBe(
      "team/docs.yaml:6:3: source_path agent does not exist",
    );
    await put("agent", "a file");
    expect((await failure(readSourceTree(await load(), { root: t.root }))).message).toContain(
      "agent is not a directory",
    );
    await rm(join(t.root, "agent"));
    await mkdir(join(t.root, "agent/node_modules"), { recursive: true });
    expect((await failure(readSourceTree(await load(), { root: t.root }))).message).toContain(
      "agent holds no files",
    );
    await put("agent/a.bin", "x".repeat(600));
    await put("agent/b.bin", "x".repeat(600));
    expect((await failure(readSourceTree(await load(), { root: t.root, maxBytes: 1_000 }))).message).toBe(
      "team/docs.yaml:6:3: source_path agent is over 0.0 MiB; keep build outputs and dependencies out of it",
    );
    expect((await failure(readSourceTree(await load(), { root: t.root, maxFiles: 1 }))).message).toContain(
      "holds more than 1 files",
    );
  });
});

describe("readSourceTree: only the source is packed", () => {
  const paths = async (loaded?: LoadedManifest<DeploymentManifest>, secretFiles?: Set<string>) => {
    const tree = await readSourceTree(loaded ?? (await load()), {
      root: t.root,
      withBytes: true,
      ...(secretFiles ? { secretFiles } : {}),
    });
    expect(tree.digest).toBe(digestSource(tree.files)); // the digest is over the very files packed
    expect(tree.listing.map((f) => f.path)).toEqual(tree.files.map((f) => f.path));
    return tree.files.map((f) => f.path);
  };

  it("refuses a symlink to the repository's .git, outside or inside the source directory", async () => {
    await put(".git/config", "[http]\n\textraheader = AUTHORIZATION: basic Y2FuYXJ5\n");
    await put("agent/package.json", "{}");
    await symlink("../.git", join(t.root, "agent/g"));
    const error = await unsafe(readSourceTree(await load(), { root: t.root }));
    expect(error.message).toMatch(
      /^team\/docs\.yaml:6:3: source_path agent\/g is a symlink that leaves agent; /,
    );
    await rm(join(t.root, "agent/g"));
    await put("agent/.git/config", "[core]\n");
    await symlink(".git/config", join(t.root, "agent/cfg"));
    expect((await unsafe(readSourceTree(await load(), { root: t.root }))).message).toContain(
      "source_path agent/cfg is a symlink into a .git directory",
    );
    await rm(join(t.root, "agent/cfg"));
    await symlink(".git", join(t.root, "agent/meta"));
    await unsafe(readSourceTree(await load(), { root: t.root }));
    await rm(join(t.root, "agent/meta"));
    expect(await paths()).toEqual(["package.json"]);
    // A source_path inside a .git is refused as a whole.
    await unsafe(readSourceTree(await load("../agent/.git"), { root: t.root }));
  });

  it("leaves out credentials by name (also behind a link), unless .plumbignore takes one back", async () => {
    await put("agent/package.json", "{}");
    const named = [".env", ".env.production", "tls.pem", "sub/server.key", "id_rsa", "id_ed25519.pub"];
    const toolFiles = [
      ".npmrc",
      "sub/.npmrc",
      ".yarnrc.yml",
      ".pypirc",
      ".netrc",
      ".git-credentials",
      "client.p12",
      "a.pfx",
    ];
    for (const name of [...named, ...toolFiles]) await put(`agent/${name}`, "secret");
    await put("agent/.env.example", "A=");
    await symlink(".env", join(t.root, "agent/config.txt"));
    expect(await paths()).toEqual(["package.json"]);
    await put("agent/.plumbignore", "!.env.example\n!/.npmrc\n");
    expect(await paths()).toEqual([".env.example", ".npmrc", ".plumbignore", "package.json"]);
  });

  it("honours .gitignore and .plumbignore (gitignore syntax) at the top of the source directory", async () => {
    await put("agent/package.json", "{}");
    await put("agent/src/agent.ts", "x");
    await put("agent/dist/agent.js", "x");
    await put("agent/debug.log", "x");
    await put("agent/src/keep.log", "x");
    await put("agent/notes/todo.md", "x");
    await put("agent/.gitignore", "dist/\n*.log\n!src/keep.log\n");
    await put("agent/.plumbignore", "/notes\n");
    expect(await paths()).toEqual([
      ".gitignore",
      ".plumbignore",
      "package.json",
      "src/agent.ts",
      "src/keep.log",
    ]);
  });

  it("reads .gitignore files from the manifest root down, and inside the directory; the deeper one wins", async () => {
    await put("agent/package.json", "{}");
    await put(".gitignore", "*.secret\n/agent/local/\n");
    await put("agent/creds.secret", "x");
    await put("agent/local/dev.json", "x");
    await put("agent/src/app.log", "x");
    await put("agent/src/keep.log", "x");
    await put("agent/src/gen/out.js", "x");
    await put("agent/src/.gitignore", "gen/\n!keep.log\n");
    await put("agent/.gitignore", "*.log\n");
    await put("agent/other/gen/x.js", "x"); // src/.gitignore does not reach here
    expect(await paths()).toEqual([
      ".gitignore",
      "other/gen/x.js",
      "package.json",
      "src/.gitignore",
      "src/keep.log",
    ]);
  });

  it("never packs a file behind a valueFrom.file secret, however it is spelled or linked", async () => {
    await put("agent/package.json", "{}");
    await put("agent/token.txt", "canary-secret");
    await symlink("token.txt", join(t.root, "agent/t"));
    const own = await load(
      "../agent",
      "  secrets:\n    - {name: T, valueFrom: {file: ./../agent/./token.txt}}\n",
    );
    expect(await paths(own)).toEqual(["package.json"]);
    // Another manifest's secret file, given by real path
    const other = await load();
    expect(await paths(other)).toEqual(["package.json", "t", "token.txt"]);
    const real = await realpath(join(t.root, "agent/token.txt"));
    expect(await paths(other, new Set([real]))).toEqual(["package.json"]);
    // A hard link is another path to the same file: left out too.
    await link(join(t.root, "agent/token.txt"), join(t.root, "agent/hard.txt"));
    expect(await paths(own)).toEqual(["package.json"]);
  });
});

describe("readSourceTree: entries that are not what they seem", () => {
  it("a symlink loop in the directory, or as source_path, is said to be a loop", async () => {
    await put("agent/a.txt", "a");
    const [loaded, looped] = [await load(), await load("../loop")]; // the loader warns of loops
    await symlink("self", join(t.root, "agent/self"));
    expect((await failure(readSourceTree(loaded, { root: t.root }))).message).toBe(
      "team/docs.yaml:6:3: source_path agent/self is a symlink loop (ELOOP) that never reaches a file; remove it",
    );
    await symlink("loop", join(t.root, "loop"));
    expect((await failure(readSourceTree(looped, { root: t.root }))).message).toBe(
      "team/docs.yaml:6:3: source_path loop is a symlink loop (ELOOP) that never reaches a file or directory",
    );
  });

  it("a name that is not UTF-8 is refused, naming the directory, not a bare ENOENT", async () => {
    await put("agent/a.txt", "a");
    await writeFile(Buffer.concat([Buffer.from(join(t.root, "agent/bad")), Buffer.from([0xff])]), "x");
    expect((await failure(readSourceTree(await load(), { root: t.root }))).message).toBe(
      "team/docs.yaml:6:3: source_path agent/bad\ufffd is named with bytes that are not UTF-8; rename it",
    );
  });

  it("a listed file that became a FIFO, or changed size, before it was read is refused: run again", async () => {
    const why: string[] = [];
    const fail = (reason: string): never => {
      why.push(reason);
      throw new Error(reason);
    };
    await put("agent/a.txt", "abc");
    const pipe = join(t.root, "agent/pipe");
    execFileSync("mkfifo", [pipe]);
    // A writer holds it open (O_RDWR does not wait on Linux): a blocking read would wait on it.
    const writer = openSync(pipe, constants.O_RDWR);
    try {
      await expect(readListedFile(pipe, 3, fail)).rejects.toThrow();
    } finally {
      closeSync(writer);
    }
    await expect(readListedFile(join(t.root, "agent/a.txt"), 2, fail)).rejects.toThrow();
    expect(await readListedFile(join(t.root, "agent/a.txt"), 3, fail)).toEqual(Buffer.from("abc"));
    expect(why).toEqual([
      "changed while plumb read it (no longer a regular file): run again",
      "changed while plumb read it (3 bytes, not 2): run again",
    ]);
  });
});
