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
