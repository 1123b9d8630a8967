import { defineConfig } from "vitest/config";
import { LongestFirstSequencer } from "./test/support/longest-first.js";

// Test files that change what the whole process shares — nock's interceptors on http and fetch
// (installed on import, never taken out), vi.mock, fake timers, stubbed globals or environment
// variables, process.env written by hand — run each in a process of its own. Every other file
// shares its worker's modules with the files before it (isolate: false): each file no longer
// imports and compiles src/ again, about half of the suite's CPU (docs/testing.md "Speed"). The CLI
// run in-process (test/support/in-process-cli.ts) puts back stdout, the environment and exitCode
// after each call, so its files share a worker too. A new test that changes process-wide state
// belongs here; test/support/isolation.test.ts finds those that are not.
export const ISOLATED = [
  // test/api's files that use nock (its helpers.ts imports it) or fake timers; the others there
  // share a worker.
  "test/api/agent-server-client.test.ts",
  "test/api/agent-server-stateless.test.ts",
  "test/api/before-write.test.ts",
  "test/api/control-plane-client.test.ts",
  "test/api/error-redaction.test.ts",
  "test/api/transport/http.test.ts",
  "test/api/transport/key-rotation.test.ts",
  "test/api/transport/abortable-exchange.test.ts",
  "test/status/status-store-durability.test.ts",
  "test/controller/reconcile-fingerprints.e2e.test.ts",
  "test/manifest/format/format-github.test.ts",
  "test/manifest/format/format-sarif.test.ts",
  "test/control-plane/cli-startup.test.ts",
  "test/control-plane/agent-server/runs/webhook.test.ts",
  "test/control-plane/jit-env.test.ts",
  "test/control-plane/listen-errors.test.ts",
  "test/control-plane/api-key-file.test.ts",
  "test/lock/branch-lease-paths.test.ts",
  "test/manifest/unprintable-names.test.ts",
  "test/manifest/format/format-controls.test.ts",
  "test/security/git-argv.e2e.test.ts",
];

// Node 20 reads and parses the whole NODE_EXTRA_CA_CERTS bundle at every start (Node 24 only when
// TLS is first used): 0.09 s of CPU per process where it is set, as on this workplace's machines
// (/etc/ssl/certs/ca-certificates.crt), and a run starts about 340 node processes (the built CLI,
// controllers, workers). The tests speak to loopback servers only, none of them over TLS with a
// private CA, so neither the workers nor the processes they start need it.
delete process.env.NODE_EXTRA_CA_CERTS;

export default defineConfig({
  test: {
    // Builds dist/ once, before any test file runs; a failed build stops the run (tsc's output).
    globalSetup: ["test/global-setup.ts"],
    // Stops a hang, not a slow test: a git-heavy status-location test of about 3 s in an earlier run
    // took 35 s at load 20 and failed on the 30 s it had (waits in tests end on a condition).
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Four test files at a time, also on two cores: most files wait (revision states, leases, child
    // processes) far more than they compute. Quiet, 2026-11-26: 2 workers 284 s of wall for 1.1
    // cores busy; 4 workers 193 s for 1.7 (docs/testing.md "Speed"). Cost bounds count CPU time and
    // waits end on a condition, so a busy core slows a test down rather than failing it;
    // `--maxWorkers=2` is the fallback where a run shows timeouts. Six since 2026-11-27 (afternoon):
    // with four, 1.7 of the 2 cores were busy, and the suite's 3,206 tests took 241-243 s in CI.
    maxWorkers: 6,
    // Longest file first, by test/durations.json: CI's clean clone has no results cache, and by size
    // the longest file (runnable.e2e, small) started last and set the run's tail (docs/testing.md).
    sequence: { sequencer: LongestFirstSequencer },
    projects: [
      { extends: true, test: { name: "isolated", include: ISOLATED, isolate: true } },
      {
        extends: true,
        test: { name: "shared", include: ["test/**/*.test.ts"], exclude: ISOLATED, isolate: false },
      },
    ],
  },
});
