import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { acquireStateLock } from "../../src/lock/index.js";
import { api } from "../controller/support.js";
import { plain, runCommand, STAGING_KEY, startTwoPlanes } from "./two-planes.js";

// A PATH that is a link to a file (x.yaml -> d/a.yaml, inside the repository) keeps its store beside
// the link, but applies what d applies: while an apply of d held d's store, apply x.yaml ran beside
// it and sent the same change (both would: two revisions for one change). It now locks d's store
// (and those above it) too, as a writer does the stores nearby (docs/status.md "Stores above and
// below"). The other writer is stood for by the real state lock held on d's store; revisions counted.

let planes: Awaited<ReturnType<typeof startTwoPlanes>>;
let repo: string;
const env = () => ({ PLUMB_API_URL: planes.staging.url, PLUMB_API_KEY: STAGING_KEY });
const apply = (path: string) => runCommand(applyCommand, [path, "--yes", "--no-wait"], planes, env());

beforeAll(async () => {
  planes = await startTwoPlanes();
  repo = await mkdtemp(join(tmpdir(), "plumb-linked-file-"));
  execFileSync("git", ["init", "-q", repo]);
  await mkdir(join(repo, "d"));
  await writeFile(join(repo, "d", "a.yaml"), plain("a"));
  await symlink(join(repo, "d", "a.yaml"), join(repo, "x.yaml"));
});
afterAll(async () => {
  await planes?.staging.stop();
  await planes?.prod.stop();
  await rm(repo, { recursive: true, force: true });
});

const revisions = async () => {
  const client = api(planes.staging.url, STAGING_KEY);
  return (await client.revisions((await client.deployment("a")).id)).length;
};
const bump = async (tag: string) => {
  const file = join(repo, "d", "a.yaml");
  await writeFile(file, (await readFile(file, "utf8")).replace(/img\/a:[^"]+/, `img/a:${tag}`));
};

it("apply of a link to a file is refused, sending nothing, while the store of the file's directory is held", async () => {
  expect((await apply(join(repo, "d"))).code).toBe(0);
  await bump("2");
  const before = await revisions();
  const other = await acquireStateLock(
    { statusDir: join(repo, "d", ".plumb", "status") },
    { command: "plumb apply (another)" },
  );
  const refused = apply(join(repo, "x.yaml")).finally(() => other.release());
  await expect(refused).rejects.toMatchObject({ code: "state-locked" });
  await expect(refused).rejects.toThrow(join(repo, "d", ".plumb", "status"));
  expect(await revisions()).toBe(before);
  expect((await apply(join(repo, "x.yaml"))).code).toBe(0); // once it is free
  expect(await revisions()).toBe(before + 1);
});
