// @ts-check
// vitest as StrykerJS runs it (stryker.config.mjs): the unit tests of the mutated modules need
// no dist/, so no globalSetup build (it would compile the instrumented sandbox on every run).
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
  },
});
