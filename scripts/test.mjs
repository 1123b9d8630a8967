// `npm test`: the static checks that are cheap (typecheck, knip) and the vitest suite side by side
// instead of one after the other (docs/testing.md "Speed"). Most test files wait (revisions, leases,
// child processes) more than they compute, so the checks mostly use CPU the tests leave idle; they
// run niced, so a test that does compute keeps its share. Lint is `npm run lint`, on its own: its
// type-aware rules cost about 80 s of CPU and 2 GB, and with all three checks beside it vitest
// took 285 s instead of 205 s alone (2026-11-27, quiet); CI runs lint once (.ci/run). Arguments go to vitest (`npm test --
// --reporter=json ...`). The checks' output is held and printed once each ends, under its name,
// so it does not interleave with vitest's; the exit status fails when any part fails.
import { spawn, spawnSync } from "node:child_process";
import { performance } from "node:perf_hooks";

const checks = ["typecheck", "knip"];
const niceAvailable = process.platform !== "win32" && spawnSync("nice", ["true"]).status === 0;

/** Runs `npm run NAME` with its output held; resolves with its status, output and duration. */
function runCheck(name) {
  const started = performance.now();
  const [command, args] = niceAvailable
    ? ["nice", ["-n", "10", "npm", "run", "--silent", name]]
    : ["npm", ["run", "--silent", name]];
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (chunk) => (output += chunk));
    child.stderr.on("data", (chunk) => (output += chunk));
    child.on("error", (error) => resolve({ name, code: 1, output: String(error), ms: 0 }));
    child.on("close", (code) => resolve({ name, code: code ?? 1, output, ms: performance.now() - started }));
  });
}

/** The checks one after the other. */
async function runChecks() {
  const results = [];
  for (const name of checks) {
    const result = await runCheck(name);
    const verdict = result.code === 0 ? "passed" : `FAILED (exit ${result.code})`;
    process.stderr.write(`\n=== npm run ${name}: ${verdict} in ${(result.ms / 1000).toFixed(0)} s\n`);
    if (result.code !== 0 || result.output.trim()) process.stderr.write(result.output.trimEnd() + "\n");
    results.push(result);
  }
  return results;
}

function runVitest() {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["node_modules/vitest/vitest.mjs", "run", ...process.argv.slice(2)],
      {
        stdio: "inherit",
      },
    );
    child.on("error", () => resolve(1));
    child.on("close", (code) => resolve(code ?? 1));
  });
}

const [checkResults, vitestCode] = await Promise.all([runChecks(), runVitest()]);
const failedChecks = checkResults.filter((r) => r.code !== 0).map((r) => r.name);
if (failedChecks.length > 0) process.stderr.write(`\nnpm test: failed checks: ${failedChecks.join(", ")}\n`);
process.exitCode = failedChecks.length > 0 || vitestCode !== 0 ? 1 : 0;
