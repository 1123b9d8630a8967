import { describe, expect, it } from "vitest";
import {
  CONTROLLER_HEAP_GROWING_PERCENT,
  controllerHeapFlag,
  controllerRestartFlags,
  tuneHeapForController,
} from "../../src/cli/heap-tuning.js";

describe("controller heap settings", () => {
  it("grows the heap by 10% and uses 4 MB semi-spaces by default", () => {
    expect(CONTROLLER_HEAP_GROWING_PERCENT).toBe(10);
    expect(controllerHeapFlag([], undefined)).toBe("--heap-growing-percent=10");
    expect(controllerHeapFlag(["--max-old-space-size=256"], "--enable-source-maps")).toBe(
      "--heap-growing-percent=10",
    );
    expect(controllerRestartFlags(["--enable-source-maps"], "--max-old-space-size=256")).toEqual([
      "--max-semi-space-size=4",
    ]);
  });

  it("leaves the user's own settings alone, as node flags or in NODE_OPTIONS", () => {
    expect(controllerHeapFlag(["--heap-growing-percent=50"], undefined)).toBeUndefined();
    expect(controllerHeapFlag([], "--max-semi-space-size=4 --heap_growing_percent=10")).toBeUndefined();
    expect(controllerRestartFlags(["--max-semi-space-size=4"], undefined)).toBeUndefined();
    expect(controllerRestartFlags([], "--max-young-generation-size=16")).toBeUndefined();
  });

  it("restarts in place with the flags before the program's arguments, and only once", () => {
    const calls: Array<{ file: string; args: readonly string[] }> = [];
    const proc = {
      execPath: "/usr/bin/node",
      execArgv: ["--enable-source-maps"],
      argv: ["/usr/bin/node", "/app/main.js", "controller", "--dir", "x"],
      env: {},
      execve: ((file: string, args: readonly string[]) => {
        calls.push({ file, args });
      }) as never,
    };
    tuneHeapForController(proc);
    expect(calls).toEqual([
      {
        file: "/usr/bin/node",
        args: [
          "/usr/bin/node",
          "--max-semi-space-size=4",
          "--enable-source-maps",
          "/app/main.js",
          "controller",
          "--dir",
          "x",
        ],
      },
    ]);
    tuneHeapForController({ ...proc, execArgv: ["--max-semi-space-size=4", "--enable-source-maps"] });
    expect(calls).toHaveLength(1);
  });
});
