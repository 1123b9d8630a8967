// @ts-check
// StrykerJS, shared by `npm run mutation` (scripts/mutation.mjs runs one module at a time, each
// against its own tests) and a one-off `npx stryker run --mutate FILE --testFiles TEST`.
// docs/testing.md says what is measured and the scores.
const config = {
  testRunner: "vitest",
  vitest: { configFile: "vitest.mutation.config.mjs", related: false },
  coverageAnalysis: "perTest",
  // vitest strips types without checking them; by default Stryker would also prepend // @ts-nocheck
  // to every test/**/*.ts, fixtures included (a source tree's file sizes and digest then change).
  disableTypeChecks: false,
  // A mutant in module-level code (a const, a top-level arrow's definition) is active only while
  // the module is evaluated, and this runner does not evaluate it again per mutant: such mutants
  // were never active, and "survived" tests that would fail them (formatObjectStatus returning
  // undefined, under the tests that write records). Counted as ignored, not as survivors.
  ignoreStatic: true,
  // Two cores shared with everything else: one test runner, mutants reused across runs.
  concurrency: 1,
  incremental: true,
  incrementalFile: "reports/mutation/stryker-incremental.json",
  // Also what other runs make meanwhile: the suite's build directories (test/support/build-dist.ts, renamed
  // into dist/ when done) and other mutation runs' sandboxes; copying one that goes crashed a run.
  ignorePatterns: [
    "dist",
    "coverage",
    "reports",
    ".plumb",
    "examples",
    "bench",
    ".dist-build-*",
    ".stryker-tmp*",
  ],
  reporters: ["clear-text", "progress", "json"],
  jsonReporter: { fileName: "reports/mutation/mutation.json" },
  // A mutant that makes a loop endless is judged timed out (detected) this long after its tests' time.
  timeoutMS: 3_000,
  thresholds: { high: 90, low: 85, break: 85 },
  tempDirName: ".stryker-tmp",
  cleanTempDir: "always",
};

export default config;
