import { mkdir, mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { promoteCommand } from "../../src/cli/sync/promote.js";
import { gitIn, prodImage, stopPromotion } from "../support/promotion-repo.js";
import { environmentDoc, plain, runCommand, startTwoPlanes, type TwoPlanes } from "./two-planes.js";

// plumb promote SUBDIR, as plan, apply and validate run a directory whose own tree defines no
// Environment (docs/environments.md "A directory as PATH"): with the Environment documents above it,
// up to the git root. promote read SUBDIR's own tree only, and refused every promotion there.

let planes: TwoPlanes;
let dir: string;

beforeAll(async () => {
  planes = await startTwoPlanes();
  dir = await mkdtemp(join(tmpdir(), "plumb-promote-subdir-"));
  await mkdir(join(dir, "environments"));
  await mkdir(join(dir, "saas"));
  await writeFile(join(dir, "environments", "staging.yaml"), environmentDoc("staging"));
  await writeFile(
    join(dir, "environments", "prod.yaml"),
    environmentDoc("prod", "  promotion: {from: staging, gates: {deployed: true}}\n"),
  );
  await writeFile(join(dir, "saas", "agent.yaml"), `${plain("agent")}${prodImage("img/agent:0")}`);
  const git = gitIn(dir);
  git("init", "-q", "-b", "main");
  git("add", ".");
  git("commit", "-q", "-m", "init");
  const applied = await runCommand(applyCommand, [join(dir, "saas"), "--env", "staging", "--yes"], planes);
  if (applied.code !== 0) throw new Error(`apply --env staging failed: ${applied.err}`);
});

afterAll(() => stopPromotion(planes, dir));

describe("promote SUBDIR", () => {
  it("runs with the Environment documents above it, and writes SUBDIR's files", async () => {
    const run = await runCommand(promoteCommand, [join(dir, "saas"), "--to", "prod", "--write"], planes);
    expect(run.code, run.err).toBe(0);
    expect(run.out).toContain("agent: promoted");
    const text = await readFile(join(dir, "saas", "agent.yaml"), "utf8");
    expect(text).toContain('image_uri: "img/agent:1"');
    expect(text).not.toContain("img/agent:0");
  });

  it("--branch judges the Environment documents above it against HEAD", async () => {
    gitIn(dir)("checkout", "-q", "--", "saas/agent.yaml");
    await writeFile(
      join(dir, "environments", "prod.yaml"),
      environmentDoc("prod", "  promotion: {from: staging, gates: {deployed: false}}\n"),
    );
    const error = await runCommand(
      promoteCommand,
      [join(dir, "saas"), "--to", "prod", "--branch", "promote/prod"],
      planes,
    ).then(
      () => undefined,
      (e: Error & { code?: string }) => e,
    );
    expect(error?.code).toBe("promotion-branch-failed");
    expect(error?.message).toContain("environments/prod.yaml");
    gitIn(dir)("checkout", "-q", "--", "environments/prod.yaml");
    const run = await runCommand(
      promoteCommand,
      [join(dir, "saas"), "--to", "prod", "--branch", "promote/prod"],
      planes,
    );
    expect(run.code, run.err).toBe(0);
    const committed = gitIn(dir)("show", "promote/prod:saas/agent.yaml");
    expect(committed).toContain('image_uri: "img/agent:1"');
  });
});

// The source applied from the repository's root (its records in .plumb/status/staging/ there), then
// promoted from saas: promote read saas's own store only, so staging's checks, recorded at the
// root, read as none ("no checks recorded for revision ..."). It reads the stores above and below
// PATH as apply --env does (docs/status.md "Stores above and below").
describe("promote SUBDIR after the source was applied from the root", () => {
  it("reads the source's checks from the store above", async () => {
    const root = await mkdtemp(join(tmpdir(), "plumb-promote-subdir-root-"));
    try {
      await mkdir(join(root, "environments"));
      await mkdir(join(root, "saas"));
      await writeFile(join(root, "environments", "staging.yaml"), environmentDoc("staging"));
      const gates = "{deployed: true, checks: {min_pass_ratio: 1}}";
      await writeFile(
        join(root, "environments", "prod.yaml"),
        environmentDoc("prod", `  promotion: {from: staging, gates: ${gates}}\n`),
      );
      const verify = `  verify:\n    assistant_id: agent\n    cases:\n      - {name: ping, input: ping, expect_contains: pong}\n`;
      await writeFile(
        join(root, "saas", "rooted.yaml"),
        `${plain("rooted")}${verify}${prodImage("img/rooted:0")}`,
      );
      const git = gitIn(root);
      git("init", "-q", "-b", "main");
      git("add", ".");
      git("commit", "-q", "-m", "init");
      const applied = await runCommand(applyCommand, [root, "--env", "staging", "--yes"], planes);
      expect(applied.code, applied.err).toBe(0);
      const run = await runCommand(promoteCommand, [join(root, "saas"), "--to", "prod"], planes).catch(
        (e: Error) => ({ out: "", err: e.message, code: 1 }),
      );
      expect(run.err + run.out).not.toContain("no checks recorded");
      expect(run.code, run.err).toBe(0);
      expect(run.out).toContain("rooted: would be promoted");
    } finally {
      await stopPromotion(undefined, root);
    }
  });
});
