import { execFileSync } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { applyCommand } from "../../src/cli/sync/apply.js";
import { environmentDoc, PROD_KEY, runCommand, STAGING_KEY, type TwoPlanes } from "../cli/two-planes.js";

// The common ground of plumb promote's end-to-end tests: a manifest directory of two
// environments, staging and prod (promoted from staging), its deployments applied to staging's
// real control plane (test/cli/two-planes.ts), optionally a git repository of its own.

/** prod's override of a deployment's image: `environments.prod.spec.source_revision_config.image_uri`. */
export const prodImage = (image: string) =>
  `environments:\n  prod:\n    spec:\n      source_revision_config: {image_uri: "${image}"}\n`;

/** `git ARGS` in `dir`, with an identity, its output as text. */
export const gitIn =
  (dir: string) =>
  (...args: string[]): string =>
    execFileSync("git", ["-c", "user.name=t", "-c", "user.email=t@localhost", ...args], {
      cwd: dir,
      encoding: "utf8",
    });

type PromotionRepoOptions = {
  /** The temporary directory's name prefix. */
  prefix: string;
  /** prod's promotion gates (YAML flow); default `{deployed: false}`. */
  gates?: string;
  /** Also a git repository on `main`, the environments and `files` committed. */
  git?: boolean;
};

/**
 * A new temporary directory with environments/staging.yaml and environments/prod.yaml
 * (`promotion: {from: staging, gates}`) and `files` (name → text) beside them, applied with
 * `apply --env staging`: what promote reads its versions from.
 */
export async function promotionRepo(
  planes: TwoPlanes,
  files: Record<string, string>,
  options: PromotionRepoOptions,
): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), options.prefix));
  await mkdir(join(dir, "environments"));
  await writeFile(join(dir, "environments", "staging.yaml"), environmentDoc("staging"));
  const gates = options.gates ?? "{deployed: false}";
  await writeFile(
    join(dir, "environments", "prod.yaml"),
    environmentDoc("prod", `  promotion: {from: staging, gates: ${gates}}\n`),
  );
  for (const [name, text] of Object.entries(files)) await writeFile(join(dir, name), text);
  const applied = await runCommand(applyCommand, [dir, "--env", "staging", "--yes"], planes);
  if (applied.code !== 0) throw new Error(`apply --env staging failed (${applied.code}): ${applied.err}`);
  if (options.git) {
    const git = gitIn(dir);
    git("init", "-q", "-b", "main");
    git("add", "environments", ...Object.keys(files));
    git("commit", "-q", "-m", "init");
  }
  return dir;
}

/** The variables the built CLI finds both control planes by (environmentDoc's). */
export const planesEnv = (planes: TwoPlanes) => ({
  STAGING_API_URL: planes.staging.url,
  STAGING_API_KEY: STAGING_KEY,
  PROD_API_URL: planes.prod.url,
  PROD_API_KEY: PROD_KEY,
});

/** Stops both control planes and removes `dirs`. */
export async function stopPromotion(planes: TwoPlanes | undefined, ...dirs: Array<string | undefined>) {
  await planes?.staging.stop();
  await planes?.prod.stop();
  for (const dir of dirs) if (dir) await rm(dir, { recursive: true, force: true });
}
