import { readFileSync } from "node:fs";
import { expect, it } from "vitest";
import { PLUMB_VERSION } from "../../src/cli/options.js";

it("--version and the SARIF tool version are package.json's version", () => {
  const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
  expect(PLUMB_VERSION).toBe(pkg.version);
});
