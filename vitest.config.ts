import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // Builds dist/ once, before any test file runs; a failed build stops the run (tsc's output).
    globalSetup: ["test/global-setup.ts"],
    // Stops a hang, not a slow test: a git-heavy status-location test of about 3 s in an earlier run
    // took 35 s at load 20 and failed on the 30 s it had (waits in tests end on a condition).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Two test files at a time, also on two cores (vitest's default there is one): most files wait
    // (revision states, leases, child processes) far more than they compute (docs/testing.md
    // "Speed"). Cost bounds count CPU time and waits end on a condition, so a busy core slows a
    // test down rather than failing it.
    maxWorkers: 2,
  },
});
