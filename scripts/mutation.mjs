// @ts-check
// `npm run mutation [-- MODULE... [--force]]`: StrykerJS over the core modules, one module at a
// time, each mutated against its own tests only (stryker.config.mjs has the shared settings).
// Prints the score per module and exits 1 when one is under the threshold. Incremental: a
// module's mutants whose code and tests did not change since its last run keep their result
// (reports/mutation/MODULE.incremental.json, outside git); --force runs every mutant again.
import { Stryker } from "@stryker-mutator/core";

const THRESHOLD = 85;

/** name → the files mutated and the tests that are theirs. */
const MODULES = {
  diff: { mutate: ["src/diff/**/*.ts"], tests: ["test/diff/**/*.test.ts"] },
  "send-change": {
    mutate: ["src/apply/send-change.ts"],
    tests: ["test/apply/send-change*.test.ts"],
  },
  "revision-watcher": {
    mutate: ["src/apply/revision-watcher.ts"],
    tests: ["test/apply/watcher.test.ts", "test/apply/revision-watcher*.test.ts"],
  },
  // Narrower runs of the two slow modules (about 1 h and 1 h 20 min here), each resumable on its own:
  // the score of the whole module is that of its parts together (diff: diff-core, diff-secrets,
  // diff-plan, diff-rest; lock: lock-local, lock-branch).
  "diff-core": {
    mutate: ["src/diff/diff-deployment.ts", "src/diff/plan/build-plan.ts"],
    tests: ["test/diff/**/*.test.ts"],
    partOf: "diff",
  },
  "diff-secrets": {
    mutate: ["src/diff/secrets/**/*.ts"],
    tests: ["test/diff/**/*.test.ts"],
    partOf: "diff",
  },
  "diff-plan": {
    mutate: ["src/diff/plan/**/*.ts", "!src/diff/plan/build-plan.ts"],
    tests: ["test/diff/**/*.test.ts"],
    partOf: "diff",
  },
  "diff-rest": {
    mutate: ["src/diff/*.ts", "!src/diff/diff-deployment.ts"],
    tests: ["test/diff/**/*.test.ts"],
    partOf: "diff",
  },
  lock: { mutate: ["src/lock/**/*.ts"], tests: ["test/lock/**/*.test.ts"] },
  "lock-local": {
    mutate: ["src/lock/**/*.ts", "!src/lock/branch/**/*.ts"],
    tests: ["test/lock/**/*.test.ts"],
    partOf: "lock",
  },
  "lock-branch": {
    mutate: ["src/lock/branch/**/*.ts"],
    tests: ["test/lock/**/*.test.ts"],
    partOf: "lock",
  },
  "status-store": {
    mutate: ["src/status/status-store.ts", "src/status/write/*.ts"],
    tests: ["test/status/status-store*.test.ts"],
  },
  "work-queue": {
    mutate: ["src/controller/queue/work-queue.ts"],
    tests: ["test/controller/queue/work-queue*.test.ts"],
  },
  schedule: {
    mutate: ["src/controller/queue/schedule.ts"],
    tests: ["test/controller/queue/schedule*.test.ts"],
  },
};

/** Stryker's mutation score: detected (killed, timed out) over detected and undetected. */
function score(/** @type {Array<{ status: string }>} */ results) {
  const count = (/** @type {string[]} */ statuses) =>
    results.filter((r) => statuses.includes(r.status)).length;
  const killed = count(["Killed"]);
  const timeout = count(["Timeout"]);
  const survived = count(["Survived"]);
  const noCoverage = count(["NoCoverage"]);
  const valid = killed + timeout + survived + noCoverage;
  const percent = valid === 0 ? 100 : ((killed + timeout) / valid) * 100;
  return { killed, timeout, survived, noCoverage, ignored: count(["Ignored"]), percent };
}

async function runModule(/** @type {string} */ name, /** @type {boolean} */ force) {
  const module = MODULES[/** @type {keyof typeof MODULES} */ (name)];
  const results = await new Stryker({
    configFile: "stryker.config.mjs",
    mutate: module.mutate,
    testFiles: module.tests,
    force,
    incrementalFile: `reports/mutation/${name}.incremental.json`,
    jsonReporter: { fileName: `reports/mutation/${name}.json` },
    reporters: ["clear-text", "progress", "json"],
    // This script judges every module; Stryker's own break would stop at the first. 0, not null:
    // Stryker merges these options into stryker.config.mjs's object, which the process keeps, and
    // fails to merge a null into the null the previous module left (a second module then crashed).
    thresholds: { high: 90, low: THRESHOLD, break: 0 },
  }).runMutationTest();
  return score(results);
}

const args = process.argv.slice(2);
const force = args.includes("--force");
const asked = args.filter((a) => !a.startsWith("--"));
const unknown = asked.filter((a) => !(a in MODULES));
if (unknown.length > 0) {
  process.stderr.write(
    `unknown module ${unknown.join(", ")}: choose from ${Object.keys(MODULES).join(", ")}\n`,
  );
  process.exit(2);
}
// Without names: every whole module (the parts are for resuming one of them piece by piece).
const whole = Object.entries(MODULES).flatMap(([name, m]) => ("partOf" in m ? [] : [name]));
const names = asked.length > 0 ? asked : whole;

const rows = [];
for (const name of names) rows.push({ name, ...(await runModule(name, force)) });

const pad = (/** @type {string | number} */ value, /** @type {number} */ width) =>
  String(value).padStart(width);
const say = (/** @type {string} */ line) => process.stdout.write(`${line}\n`);
say("\nmutation score per module (each against its own tests)");
say("module            score  killed timeout survived no-cov ignored");
for (const r of rows) {
  const verdict = r.percent >= THRESHOLD ? "" : `  under ${THRESHOLD}%`;
  say(
    `${r.name.padEnd(16)} ${pad(r.percent.toFixed(1), 6)}% ${pad(r.killed, 7)} ${pad(r.timeout, 7)}` +
      ` ${pad(r.survived, 8)} ${pad(r.noCoverage, 6)} ${pad(r.ignored, 7)}${verdict}`,
  );
}
const failed = rows.filter((r) => r.percent < THRESHOLD);
process.exitCode = failed.length > 0 ? 1 : 0;
