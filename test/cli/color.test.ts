import { afterEach, describe, expect, it } from "vitest";
import { useColor } from "../../src/cli/color.js";
import { driftCommand } from "../../src/cli/sync/drift.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { statusCommand } from "../../src/cli/sync/status.js";
import { DEFAULT_API_KEY } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { containerDoc, writeManifests } from "../reconcile/harness.js";
import { captureIo, startPlane } from "./reconcile-helpers.js";

let cp: RunningControlPlane | undefined;
afterEach(async () => {
  await cp?.stop();
  cp = undefined;
  process.exitCode = undefined;
});

const ANSI = /\x1b\[/; // eslint-disable-line no-control-regex -- looking for escape codes is the point

describe("useColor", () => {
  it("colours only a terminal without NO_COLOR", () => {
    expect(useColor({ stdout: { isTTY: true }, env: {} })).toBe(true);
    expect(useColor({ stdout: { isTTY: true }, env: { NO_COLOR: "1" } })).toBe(false);
    // no-color.org: an empty NO_COLOR does not count.
    expect(useColor({ stdout: { isTTY: true }, env: { NO_COLOR: "" } })).toBe(true);
    expect(useColor({ stdout: { isTTY: false }, env: {} })).toBe(false);
    expect(useColor({ stdout: {}, env: { CI: "true" } })).toBe(false);
  });

  it("FORCE_COLOR colours a pipe; NO_COLOR still wins; FORCE_COLOR=0 turns a terminal off", () => {
    expect(useColor({ stdout: { isTTY: false }, env: { FORCE_COLOR: "1" } })).toBe(true);
    expect(useColor({ stdout: {}, env: { FORCE_COLOR: "true" } })).toBe(true);
    expect(useColor({ stdout: { isTTY: false }, env: { FORCE_COLOR: "1", NO_COLOR: "1" } })).toBe(false);
    expect(useColor({ stdout: { isTTY: true }, env: { FORCE_COLOR: "0" } })).toBe(false);
    expect(useColor({ stdout: { isTTY: true }, env: { FORCE_COLOR: "false" } })).toBe(false);
    expect(useColor({ stdout: { isTTY: false }, env: { FORCE_COLOR: "" } })).toBe(false);
  });
});

describe("colour in plan, drift and status", () => {
  it("ANSI codes on a TTY, none with NO_COLOR, none when piped", async () => {
    const started = await startPlane();
    cp = started.cp;
    await writeManifests(started.root, [containerDoc("c-one", "registry.example/one:1")]);
    const env = { PLUMB_API_URL: cp.url, PLUMB_API_KEY: DEFAULT_API_KEY };
    const run = async (tty: boolean, extraEnv: Record<string, string>) => {
      const outs: string[] = [];
      for (const command of [planCommand, driftCommand, statusCommand]) {
        const io = captureIo(cp!, { env: { ...env, ...extraEnv } });
        let out = "";
        io.stdout = { write: (t: string) => (out += t), isTTY: tty };
        await command(io).parseAsync(["node", "plumb", started.root]);
        outs.push(out);
      }
      return outs;
    };
    const coloured = await run(true, {});
    for (const out of coloured) expect(out).toMatch(ANSI);
    for (const out of await run(true, { NO_COLOR: "1" })) expect(out).not.toMatch(ANSI);
    for (const out of await run(false, { CI: "true" })) expect(out).not.toMatch(ANSI);
    expect(coloured[0]).toContain("c-one");
  });
});
