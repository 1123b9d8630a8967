import { execFile } from "node:child_process";
import { chmod, cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import { type RunningControlPlane, startControlPlane } from "../../src/control-plane/server.js";
import { copyFlatExample } from "../support/flat-example.js";

// A reader's shell for the runnable documentation blocks: a temporary git repository holding a
// copy of examples/ (and of examples/saas without its environments as deployments/, the manifest
// directory the docs call yours: one control plane), `plumb` on PATH as the built CLI, and PLUMB_API_URL pointing at a local control plane
// on a free loopback port. The docs' address of that server, http://127.0.0.1:8123, is read as it;
// `plumb demo` runs with revision states of 0.02 s.

const run = promisify(execFile);
const repo = process.cwd();
const MAIN = join(repo, "dist", "src", "cli", "main.js");
const DOCUMENTED_URL = "http://127.0.0.1:8123";
const DEMO_REVISION_SECONDS = 0.02;

/** `doctest-live-edit NAME JSON`: PATCHes deployment NAME live, as a change made in the UI would. */
const LIVE_EDIT = `#!/usr/bin/env node
const [name, body] = process.argv.slice(2);
const api = process.env.PLUMB_API_URL, headers = { "x-api-key": process.env.PLUMB_API_KEY, "content-type": "application/json" };
const list = await (await fetch(api + "/v2/deployments?name_contains=" + encodeURIComponent(name), { headers })).json();
const found = list.resources.find((d) => d.name === name);
if (!found) { console.error("no live deployment " + name); process.exit(1); }
const res = await fetch(api + "/v2/deployments/" + found.id, { method: "PATCH", headers, body });
if (!res.ok) { console.error("PATCH " + name + ": " + res.status + " " + (await res.text())); process.exit(1); }
`;

export type DocSession = {
  root: string;
  controlPlane: RunningControlPlane;
  /** Runs a bash script in the session: exit code and everything it printed. */
  bash(script: string): Promise<{ code: number; output: string }>;
  /** A block's text with the documented control plane address replaced by this session's. */
  rewrite(text: string): string;
  close(): Promise<void>;
};

export async function startDocSession(): Promise<DocSession> {
  const controlPlane = await startControlPlane({
    port: 0,
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    runSeconds: 0,
  });
  const root = await mkdtemp(join(tmpdir(), "plumb-doc-"));
  const bin = join(root, ".bin");
  await mkdir(bin);
  await writeFile(join(bin, "plumb"), `#!/bin/sh\nexec "${process.execPath}" "${MAIN}" "$@"\n`);
  await writeFile(join(bin, "doctest-live-edit"), LIVE_EDIT);
  await Promise.all(["plumb", "doctest-live-edit"].map((name) => chmod(join(bin, name), 0o755)));
  await cp(join(repo, "examples"), join(root, "examples"), { recursive: true });
  await copyFlatExample("saas", join(root, "deployments"));
  await writeFile(join(root, ".gitignore"), ".bin/\n.home/\n");
  const inherited = Object.fromEntries(
    Object.entries(process.env).filter(([key]) => !key.startsWith("PLUMB_")),
  );
  const env: NodeJS.ProcessEnv = {
    ...inherited,
    PATH: `${bin}:${process.env.PATH ?? ""}`,
    HOME: join(root, ".home"),
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_AUTHOR_NAME: "reader",
    GIT_AUTHOR_EMAIL: "reader@example.com",
    GIT_COMMITTER_NAME: "reader",
    GIT_COMMITTER_EMAIL: "reader@example.com",
    NO_COLOR: "1",
    PLUMB_API_URL: controlPlane.url,
    PLUMB_API_KEY: DEFAULT_API_KEY,
    PLUMB_PLATFORM_URL: controlPlane.url,
    OPENAI_API_KEY: "sk-test",
  };
  const bash = async (script: string) => {
    try {
      const { stdout, stderr } = await run("bash", ["-c", script], { cwd: root, env, timeout: 170_000 });
      return { code: 0, output: stdout + stderr };
    } catch (error) {
      const failed = error as { code?: number | string; stdout?: string; stderr?: string };
      return {
        code: typeof failed.code === "number" ? failed.code : -1,
        output: `${failed.stdout ?? ""}${failed.stderr ?? ""}`,
      };
    }
  };
  await mkdir(env.HOME!);
  const init = await bash("git init -q -b main && git add -A && git commit -q -m 'manifests'");
  if (init.code !== 0) throw new Error(`git init of the doc session failed: ${init.output}`);
  return {
    root,
    controlPlane,
    bash,
    rewrite: (text) =>
      text
        .replaceAll(DOCUMENTED_URL, controlPlane.url)
        // The demo's control planes take --revision-seconds (default 1) per revision state: 47 s
        // for `plumb demo --once` on a loaded machine, 10 s at the 0.02 s its own test uses
        // (test/cli/demo-environments.test.ts); every step runs all the same.
        .replace(/^plumb demo\b/gm, `plumb demo --revision-seconds ${DEMO_REVISION_SECONDS}`),
    close: async () => {
      await controlPlane.stop();
      await rm(root, { recursive: true, force: true });
    },
  };
}
