import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, readdir, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  checkStatusDirWritable,
  defaultStatusDir,
  formatObjectStatus,
  loadStatusStore,
} from "../../src/status/status-store.js";
import {
  anyFile,
  removeObjectStatus,
  removeObservedStatus,
  saveObjectStatus,
  saveObservedStatus,
} from "../../src/status/write/save-records.js";
import { ownRecordsIn } from "../../src/git/status/status-source.js";
import { sampleStatus } from "../reconcile/fixtures.js";

// The status store's edges on a real temp directory: what each problem says, missing and damaged
// files, sequence numbers of observations and removals, the writable check.

const tempDir = async () => join(await mkdtemp(join(tmpdir(), "plumb-st-edges-")), "status");
const record = async (dir: string, name: string) =>
  JSON.parse(await readFile(join(dir, `deployment.${name}.json`), "utf8")) as Record<string, unknown>;

describe("status store edges", () => {
  it("lives under .plumb/status of the manifest root, one pretty-printed JSON document a file", () => {
    expect(defaultStatusDir("/repo")).toBe("/repo/.plumb/status");
    const status = sampleStatus("a");
    expect(formatObjectStatus(status)).toBe(`${JSON.stringify(status, null, 2)}\n`);
  });

  it("says what is wrong with each damaged file, in file-name order", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "c-dir.json"), { recursive: true });
    await writeFile(join(dir, "b-json.json"), "{not json");
    await writeFile(join(dir, "a-root.json"), "42");
    await writeFile(join(dir, "d-field.json"), JSON.stringify({ ...sampleStatus("d"), sync: 7 }));
    const { problems } = await loadStatusStore(dir);
    expect(problems.map((p) => p.file)).toEqual(
      ["a-root.json", "b-json.json", "c-dir.json", "d-field.json"].map((f) => join(dir, f)),
    );
    const [root, json, directory, field] = problems.map((p) => p.message);
    expect(root).toMatch(/^not a status record: \/ \S/);
    expect(json).toBe("not JSON");
    expect(directory).toMatch(/^not readable: \S/);
    expect(field).toMatch(/^not a status record: \/sync \S/);
  });

  it("reads no record through a symlink nor a huge file, and quotes nothing of what it could not parse", async () => {
    const dir = await tempDir();
    await mkdir(dir, { recursive: true });
    const secret = join(dir, "..", "token.txt");
    await writeFile(secret, "sk-live-TOKEN-0123456789");
    await symlink(secret, join(dir, "deployment.leak.json"));
    await writeFile(join(dir, "deployment.huge.json"), Buffer.alloc(1024 * 1024 + 1, 0x20));
    await writeFile(join(dir, "deployment.text.json"), "sk-live-OTHER-0123456789");
    const { problems, objects } = await loadStatusStore(dir);
    expect(objects.size).toBe(0);
    const text = JSON.stringify(problems);
    expect(text).not.toContain("sk-live");
    expect(problems.map((p) => p.message)).toEqual([
      "not readable: larger than 1 MiB, not a record",
      "not readable: a symbolic link, not a record",
      "not JSON",
    ]);
  });

  it("a status directory that cannot be listed is status-unreadable, with the fix", async () => {
    const parent = await mkdtemp(join(tmpdir(), "plumb-st-edges-"));
    await writeFile(join(parent, "file"), "");
    await expect(loadStatusStore(join(parent, "file"))).rejects.toMatchObject({
      code: "status-unreadable",
      message: expect.stringContaining("pass --status-dir"),
    });
  });

  it("a record whose rename fails leaves no temp file behind", async () => {
    const dir = await tempDir();
    await mkdir(join(dir, "deployment.a.json"), { recursive: true });
    await expect(saveObjectStatus(dir, sampleStatus("a"), anyFile)).rejects.toMatchObject({
      code: "status-write-failed",
    });
    expect(await readdir(dir)).toEqual(["deployment.a.json"]);
  });

  it("a newer apply replaces the applied fields; an older one keeps the file's, spec and upload included", async () => {
    const dir = await tempDir();
    const upload = { digest: "sha256:src", object_path: "uploads/x.tar.gz" };
    const first = sampleStatus("a", {
      applied_at: "2026-01-02T00:00:00Z",
      manifest_digest: "sha256:first",
      applied_spec: { source: "internal_source" },
      source_upload: upload,
    });
    await saveObjectStatus(dir, first, anyFile);
    const later = sampleStatus("a", { applied_at: "2026-01-03T00:00:00Z", manifest_digest: "sha256:later" });
    await saveObjectStatus(dir, later, anyFile);
    expect(await record(dir, "a")).toMatchObject({ manifest_digest: "sha256:later", seq: 2 });
    expect(await record(dir, "a")).not.toHaveProperty("source_upload");

    const b = { ...first, name: "b" };
    await saveObjectStatus(dir, b, anyFile);
    const slow = sampleStatus("b", { applied_at: "2026-01-01T00:00:00Z", manifest_digest: "sha256:slow" });
    await saveObjectStatus(dir, slow, anyFile);
    expect(await record(dir, "b")).toMatchObject({
      manifest_digest: "sha256:first",
      applied_at: "2026-01-02T00:00:00Z",
      applied_spec: { source: "internal_source" },
      source_upload: upload,
      seq: 2,
    });
  });

  it("through saveOwnObjectStatus, an older apply keeps a later one's fields from the store's own record, none from a file git tracks", async () => {
    const dir = await tempDir();
    const repo = join(dir, "..");
    execFileSync("git", ["init", "-q", repo]);
    const later = { applied_at: "2026-01-02T00:00:00Z", manifest_digest: "sha256:later" };
    await saveObjectStatus(dir, sampleStatus("a", later), anyFile);
    await saveObjectStatus(dir, sampleStatus("b", later), anyFile);
    execFileSync("git", ["-C", repo, "add", "-f", join(dir, "deployment.b.json")]); // a commit's file
    const slow = { applied_at: "2026-01-01T00:00:00Z", manifest_digest: "sha256:slow" };
    const store = ownRecordsIn(dir);
    await store.saveOwnObjectStatus(sampleStatus("a", slow));
    await store.saveOwnObjectStatus(sampleStatus("b", slow));
    expect(await record(dir, "a")).toMatchObject(later);
    expect(await record(dir, "b")).toMatchObject(slow);
  });

  // A file at a record's path that git tracks (a commit's) gives no sequence number either: a huge
  // one blocked every refresh (status, drift) and made an apply's count overflow.
  it("through saveOwnObjectStatus and saveOwnObservedStatus, a file git tracks gives no sequence number; the store's own still does", async () => {
    const dir = await tempDir();
    const repo = join(dir, "..");
    execFileSync("git", ["init", "-q", repo]);
    const huge = 1_000_000_000_000;
    for (const name of ["a", "b", "c", "d"])
      await saveObjectStatus(dir, { ...sampleStatus(name), seq: huge - 1 }, anyFile);
    // Asked once with nothing tracked (the answer kept), then a commit's files: the index changed.
    const store = ownRecordsIn(dir);
    await store.saveOwnObjectStatus(sampleStatus("a"));
    expect(await record(dir, "a")).toMatchObject({ seq: huge + 1 });
    execFileSync("git", [
      "-C",
      repo,
      "add",
      "-f",
      join(dir, "deployment.b.json"),
      join(dir, "deployment.d.json"),
    ]);
    await store.saveOwnObjectStatus(sampleStatus("b"));
    expect(await record(dir, "b")).toMatchObject({ seq: 1 });
    expect(await store.saveOwnObservedStatus(sampleStatus("c", { sync: "Synced" }), 3)).toBe(false); // own, newer
    expect(await store.saveOwnObservedStatus(sampleStatus("d", { sync: "Synced" }), 3)).toBe(true);
    expect(await record(dir, "d")).toMatchObject({ sync: "Synced", seq: 4 });
  });

  // A removal (the object gone) neither compares with nor deletes a file git tracks at the record's
  // path: a commit's file with a high number blocked it, with a low one (or no record) was deleted.
  it("through removeOwnObservedStatus, a file git tracks is neither compared nor deleted; the store's own still is", async () => {
    const dir = await tempDir();
    const repo = join(dir, "..");
    execFileSync("git", ["init", "-q", repo]);
    const huge = Number.MAX_SAFE_INTEGER - 1; // the highest number trusted (written one past the writer's)
    for (const name of ["a", "b", "c", "d"])
      await saveObjectStatus(dir, { ...sampleStatus(name), seq: name === "b" ? 0 : huge - 1 }, anyFile);
    await writeFile(join(dir, "deployment.e.json"), "not a record");
    const committed = ["a", "b", "e"].map((n) => join(dir, `deployment.${n}.json`));
    execFileSync("git", ["-C", repo, "add", "-f", ...committed]);
    const texts = await Promise.all(committed.map((f) => readFile(f, "utf8")));
    const removal = { ...sampleStatus("a"), seq: 5 };
    const store = ownRecordsIn(dir);
    expect(await store.removeOwnObservedStatus(removal)).toBe(true); // was false: blocked by huge
    expect(await store.removeOwnObservedStatus({ ...removal, name: "b" })).toBe(true);
    expect(await store.removeOwnObservedStatus({ ...removal, name: "e" })).toBe(true);
    expect(await Promise.all(committed.map((f) => readFile(f, "utf8")))).toEqual(texts); // none deleted
    expect(await store.removeOwnObservedStatus({ ...removal, name: "c" })).toBe(false); // own, newer
    expect(await store.removeOwnObservedStatus({ ...removal, name: "d", seq: huge })).toBe(true);
    expect((await readdir(dir)).sort()).toEqual([
      "deployment.a.json",
      "deployment.b.json",
      "deployment.c.json",
      "deployment.e.json",
    ]);
  });

  // git's answer is kept by the writer that asked (a command's run, a controller's status book), not
  // by the process for every store at that path: one answer per path for the process answered a
  // store that a `git init` nested in another repository with the outer one's unchanged index.
  it("keeps git's answer per writer: a new run asks the repository the store is in now", async () => {
    const outer = await mkdtemp(join(tmpdir(), "plumb-st-edges-"));
    const dir = join(outer, "inner", ".plumb", "status");
    execFileSync("git", ["init", "-q", outer]);
    await saveObjectStatus(dir, sampleStatus("a"), anyFile);
    execFileSync("git", ["-C", outer, "add", "-f", join(dir, "deployment.a.json")]); // a commit's file
    await ownRecordsIn(dir).removeOwnObjectStatus("Deployment", "a");
    expect(await readdir(dir)).toEqual(["deployment.a.json"]); // the outer repository's: kept
    // The store's own repository now (nested): nothing tracked there, so a's file is its record.
    execFileSync("git", ["init", "-q", join(outer, "inner")]);
    await ownRecordsIn(dir).removeOwnObjectStatus("Deployment", "a");
    expect(await readdir(dir)).toEqual([]); // was kept: the outer repository's answer, cached
  });

  // A store in a git checkout can hold a commit's file at a record's path: a write that trusted it
  // took its fields and number, a removal deleted it. No write or removal trusts a file unasked: each
  // caller passes git's answer (git/status/status-source.ts) or says anyFile where it means it.
  it("has every write and removal say whose files it trusts: a caller cannot leave it out (type-checked)", async () => {
    const dir = await tempDir();
    const unasked = [
      // @ts-expect-error: a write says whose files it trusts (git's answer, or anyFile)
      () => saveObjectStatus(dir, sampleStatus("a")),
      // @ts-expect-error: an observation too
      () => saveObservedStatus(dir, sampleStatus("a"), null),
      // @ts-expect-error: a removal of an observed record too
      () => removeObservedStatus(dir, sampleStatus("a")),
      // @ts-expect-error: a pruned object's removal too
      () => removeObjectStatus(dir, "Deployment", "a"),
    ];
    expect(unasked).toHaveLength(4); // never called: npm run typecheck is the check
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "deployment.a.json"), "a commit's file");
    const notOwn = () => Promise.resolve(false);
    await removeObjectStatus(dir, "Deployment", "a", notOwn);
    expect(await removeObservedStatus(dir, sampleStatus("a"), notOwn)).toBe(true);
    expect(await readFile(join(dir, "deployment.a.json"), "utf8")).toBe("a commit's file");
  });

  it("trusts no sequence number whose next one is not a safe integer: read without it, counted again from 1", async () => {
    const dir = await tempDir();
    await mkdir(dir, { recursive: true });
    const write = (name: string, seq: number) =>
      writeFile(join(dir, `deployment.${name}.json`), JSON.stringify({ ...sampleStatus(name), seq }));
    await write("max", Number.MAX_SAFE_INTEGER);
    await write("above", 1e300);
    await write("last", Number.MAX_SAFE_INTEGER - 1);
    const { objects } = await loadStatusStore(dir);
    expect(objects.get("Deployment/max")).not.toHaveProperty("seq");
    expect(objects.get("Deployment/above")).not.toHaveProperty("seq");
    expect(objects.get("Deployment/last")).toMatchObject({ seq: Number.MAX_SAFE_INTEGER - 1 });
    await saveObjectStatus(dir, sampleStatus("max"), anyFile);
    expect(await record(dir, "max")).toMatchObject({ seq: 1 });
    expect(await saveObservedStatus(dir, sampleStatus("above"), 7, anyFile)).toBe(true);
    expect(await record(dir, "above")).toMatchObject({ seq: 8 });
  });

  it("an observation over a damaged file is written, numbered after its base", async () => {
    const dir = await tempDir();
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "deployment.a.json"), "{damaged");
    expect(await saveObservedStatus(dir, sampleStatus("a"), null, anyFile)).toBe(true);
    expect(await record(dir, "a")).toMatchObject({ seq: 1 });
    expect(await saveObservedStatus(dir, sampleStatus("b"), 5, anyFile)).toBe(true);
    expect(await record(dir, "b")).toMatchObject({ seq: 6 });
  });

  it("an observation made from no record is dropped over a record without a sequence number", async () => {
    const dir = await tempDir();
    await mkdir(dir, { recursive: true });
    const { seq: _seq, ...unnumbered } = sampleStatus("a", { sync: "Synced" });
    await writeFile(join(dir, "deployment.a.json"), JSON.stringify(unnumbered));
    expect(await saveObservedStatus(dir, sampleStatus("a", { sync: "OutOfSync" }), null, anyFile)).toBe(
      false,
    );
    expect(await record(dir, "a")).toMatchObject({ sync: "Synced" });
  });

  it("a removal made from the record the file holds removes it; a missing record is removed already", async () => {
    const dir = await tempDir();
    await saveObjectStatus(dir, sampleStatus("a"), anyFile);
    await saveObjectStatus(dir, sampleStatus("a"), anyFile);
    const current = (await loadStatusStore(dir)).objects.get("Deployment/a")!;
    expect(current.seq).toBe(2);
    expect(await removeObservedStatus(dir, current, anyFile)).toBe(true);
    expect(await readdir(dir)).toEqual([]);
    expect(await removeObservedStatus(dir, current, anyFile)).toBe(true);
    await expect(removeObjectStatus(dir, "Deployment", "a", anyFile)).resolves.toBeUndefined();
  });

  it("checks a status directory is writable: creates it, leaves nothing, and names the fix when it cannot", async () => {
    const parent = await mkdtemp(join(tmpdir(), "plumb-st-edges-"));
    const dir = join(parent, "a", "b");
    await checkStatusDirWritable(dir);
    expect(await readdir(dir)).toEqual([]);
    await writeFile(join(parent, "file"), "");
    await expect(checkStatusDirWritable(join(parent, "file", "status"))).rejects.toMatchObject({
      code: "status-write-failed",
      message: expect.stringContaining("pass --status-dir to a writable directory"),
    });
  });
});
