import { execFile } from "node:child_process";
import { stat } from "node:fs/promises";
import { dirname, relative, resolve, sep } from "node:path";
import { promisify } from "node:util";
import type { ApiOptions } from "../api/config.js";
import { publicUrl } from "../api/public-url.js";
import { insideRepository } from "../git/inside-repository.js";
import { gitCommitOf } from "../reconcile/session.js";
import type { ReportContext } from "../report/report-context.js";

// The facts a pull-request comment or an annotation names: paths from the repository root, the
// commit, the control plane (without credentials) and tenant.

/** The repository's root: the CI's checkout (GitHub, GitLab), else git's top level, else the working directory. */
async function repositoryRoot(path: string, env: NodeJS.ProcessEnv): Promise<string> {
  const ci = env.GITHUB_WORKSPACE || env.CI_PROJECT_DIR;
  if (ci) return resolve(ci);
  if (!insideRepository(path)) return process.cwd(); // git could only fail: no process for it
  try {
    const { stdout } = await promisify(execFile)("git", ["rev-parse", "--show-toplevel"], { cwd: path });
    return stdout.trim() || process.cwd();
  } catch {
    return process.cwd();
  }
}

/** Problem and change files are relative to the manifest root; this makes them repository paths. */
export async function repositoryPaths(
  path: string,
  env: NodeJS.ProcessEnv,
): Promise<(file: string) => string> {
  const root = (await stat(path)).isDirectory() ? resolve(path) : dirname(resolve(path));
  const repository = await repositoryRoot(root, env);
  return (file) => relative(repository, resolve(root, file)).split(sep).join("/");
}

export async function buildReportContext(
  path: string,
  api: Pick<ApiOptions, "apiUrl" | "tenantId">,
  env: NodeJS.ProcessEnv,
): Promise<ReportContext> {
  return {
    commit: await gitCommitOf(path),
    controlPlane: publicUrl(api.apiUrl),
    tenant: api.tenantId ?? null,
    repositoryPath: await repositoryPaths(path, env),
  };
}
