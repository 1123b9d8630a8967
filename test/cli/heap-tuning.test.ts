import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import {
  CONTROLLER_HEAP_GROWING_PERCENT,
  controllerHeapFlag,
  controllerRestart,
  tuneHeapForController,
} from "../../src/cli/controller/heap-tuning.js";
import { memoryLimitFrom, parseMemoryQuantity } from "../../src/cli/controller/memory-limit.js";
import { assertBuilt } from "../support/built-cli.js";

const MiB = 2 ** 20;

describe("controller heap settings", () => {
  it("grows the heap by 10%, uses 4 MB semi-spaces, shrinking full GCs and one malloc arena giving back when there is no small memory limit", () => {
    expect(CONTROLLER_HEAP_GROWING_PERCENT).toBe(10);
    expect(controllerHeapFlag([], undefined)).toBe("--heap-growing-percent=10");
    expect(controllerHeapFlag(["--max-old-space-size=256"], "--enable-source-maps")).toBe(
      "--heap-growing-percent=10",
    );
    for (const limit of [undefined, 513 * MiB, 4096 * MiB])
      expect(
        controllerRestart(["--enable-source-maps"], { NODE_OPTIONS: "--max-old-space-size=256" }, limit),
      ).toEqual({
        flags: ["--max-semi-space-size=4", "--optimize-for-size", "--liftoff-only"],
        env: { MALLOC_ARENA_MAX: "1", MALLOC_MMAP_THRESHOLD_: "16384" },
      });
    expect(controllerRestart([], { MALLOC_ARENA_MAX: "8" }, undefined)?.env).toEqual({
      MALLOC_MMAP_THRESHOLD_: "16384",
    });
  });

  it("sizes itself for a small pod: old generation at 5/16 of the limit, small young generation, malloc giving back", () => {
    expect(controllerRestart([], {}, 256 * MiB)).toEqual({
      flags: ["--max-semi-space-size=2", "--max-old-space-size=80", "--optimize-for-size", "--liftoff-only"],
      env: { MALLOC_ARENA_MAX: "1", MALLOC_MMAP_THRESHOLD_: "16384" },
    });
    expect(controllerRestart([], {}, 512 * MiB)?.flags).toContain("--max-old-space-size=160");
    // V8 lets a full GC's marking overshoot its limit by up to half the way to the cap (32 MB at
    // most): half the limit left the whole 32 MB to a busy restart (docs/controller.md).
    expect(controllerRestart([], {}, 200 * MiB)?.flags).toContain("--max-old-space-size=62");
    // The user's own settings win, one by one.
    expect(
      controllerRestart(
        ["--max-old-space-size=200"],
        { NODE_OPTIONS: "--no-optimize-for-size", MALLOC_ARENA_MAX: "4", MALLOC_MMAP_THRESHOLD_: "65536" },
        256 * MiB,
      ),
    ).toEqual({ flags: ["--max-semi-space-size=2", "--liftoff-only"], env: {} });
  });

  it("keeps WebAssembly on Liftoff only on the V8 versions that flag was checked on (node refuses an unknown one)", () => {
    for (const v8 of ["11.3.244.8-node.30", "12.4.254.21-node.33", "13.6.233.17-node.53"])
      expect(controllerRestart([], {}, undefined, v8)?.flags).toContain("--liftoff-only");
    expect(controllerRestart([], {}, undefined, "14.1.146.11-node.20")?.flags).toEqual([
      "--max-semi-space-size=4",
      "--optimize-for-size",
    ]);
  });

  it("leaves the user's own settings alone, as node flags or in NODE_OPTIONS", () => {
    expect(controllerHeapFlag(["--heap-growing-percent=50"], undefined)).toBeUndefined();
    expect(controllerHeapFlag([], "--max-semi-space-size=4 --heap_growing_percent=10")).toBeUndefined();
    expect(
      controllerRestart(["--max-semi-space-size=4", "--optimize-for-size", "--no-liftoff"], {}, undefined),
    ).toBeUndefined();
    expect(
      controllerRestart(
        ["--no-optimize-for-size", "--wasm-tier-up"],
        { NODE_OPTIONS: "--max-young-generation-size=16" },
        undefined,
      ),
    ).toBeUndefined();
    expect(controllerRestart(["--max-semi-space-size=4"], {}, undefined)?.flags).toEqual([
      "--optimize-for-size",
      "--liftoff-only",
    ]);
  });

  it("restarts in place with the flags before the program's arguments, and only once", () => {
    const calls: Array<{ file: string; args: readonly string[]; env: NodeJS.ProcessEnv | undefined }> = [];
    const proc = {
      execPath: "/usr/bin/node",
      execArgv: ["--enable-source-maps"],
      argv: ["/usr/bin/node", "/app/main.js", "controller", "--dir", "x"],
      env: { HOME: "/home/plumb" } as NodeJS.ProcessEnv,
      execve: ((file: string, args: readonly string[], env?: NodeJS.ProcessEnv) => {
        calls.push({ file, args, env });
      }) as never,
    };
    tuneHeapForController(proc, 256 * MiB);
    const flags = [
      "--max-semi-space-size=2",
      "--max-old-space-size=80",
      "--optimize-for-size",
      "--liftoff-only",
    ];
    expect(calls).toEqual([
      {
        file: "/usr/bin/node",
        args: ["/usr/bin/node", ...flags, "--enable-source-maps", "/app/main.js", "controller", "--dir", "x"],
        env: { HOME: "/home/plumb", MALLOC_ARENA_MAX: "1", MALLOC_MMAP_THRESHOLD_: "16384" },
      },
    ]);
    tuneHeapForController(
      { ...proc, execArgv: [...flags, "--enable-source-maps"], env: calls[0]!.env! },
      256 * MiB,
    );
    expect(calls).toHaveLength(1);
  });
});

describe("the restart comes first", () => {
  it("the command's module loads neither the controller nor the logger: they load once, after the restart", () => {
    assertBuilt();
    const dist = (path: string) => pathToFileURL(join(process.cwd(), "dist", "src", path)).href;
    // Every module the child resolves, as a loader hook sees it.
    const hooks = `export async function resolve(specifier, context, next) {
      const result = await next(specifier, context);
      console.log(result.url);
      return result;
    }`;
    const script = `
      import { register } from "node:module";
      register("data:text/javascript,${encodeURIComponent(hooks)}");
      const { controllerCommand } = await import(${JSON.stringify(dist("cli/controller/controller.js"))});
      controllerCommand();`;
    const loaded = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(loaded).toContain(dist("cli/controller/controller.js")); // the hook saw the imports
    for (const module of ["controller/controller.js", "logger.js", "cli/controller/run-controller.js"])
      expect(loaded).not.toContain(dist(module));
  });
});

describe("Node without process.execve (before 22.15)", () => {
  it("reports the small-pod settings it could not apply, and nothing without a small limit", () => {
    const proc = {
      execPath: "/usr/bin/node",
      execArgv: [],
      argv: ["/usr/bin/node", "/app/main.js"],
      env: {},
    };
    expect(tuneHeapForController(proc, 256 * MiB)).toEqual({
      flags: ["--max-semi-space-size=2", "--max-old-space-size=80", "--optimize-for-size", "--liftoff-only"],
      env: { MALLOC_ARENA_MAX: "1", MALLOC_MMAP_THRESHOLD_: "16384" },
    });
    expect(tuneHeapForController(proc, undefined)).toBeUndefined();
    expect(tuneHeapForController(proc, 2048 * MiB)).toBeUndefined();
  });
});

describe("the controller's memory limit", () => {
  it("reads Kubernetes quantities and plain bytes from PLUMB_MEMORY_LIMIT", () => {
    expect(parseMemoryQuantity("268435456")).toBe(256 * MiB);
    expect(parseMemoryQuantity("256Mi")).toBe(256 * MiB);
    expect(parseMemoryQuantity("1Gi")).toBe(1024 * MiB);
    expect(parseMemoryQuantity("512M")).toBe(512e6);
    expect(parseMemoryQuantity("0.5Gi")).toBe(512 * MiB);
    for (const bad of ["", "256 MB", "-1", "0", "lots", "1Ti"])
      expect(parseMemoryQuantity(bad)).toBeUndefined();
    expect(memoryLimitFrom({ PLUMB_MEMORY_LIMIT: "256Mi" }, 8192 * MiB)).toBe(256 * MiB);
    expect(() => memoryLimitFrom({ PLUMB_MEMORY_LIMIT: "256MB" }, undefined)).toThrow(
      /PLUMB_MEMORY_LIMIT must be a memory size such as 268435456, 256Mi or 1Gi, not "256MB"/,
    );
  });

  it("falls back to the cgroup limit Node reports, and to none when Node reports none", () => {
    expect(memoryLimitFrom({}, 256 * MiB)).toBe(256 * MiB);
    expect(memoryLimitFrom({ PLUMB_MEMORY_LIMIT: "" }, 300 * MiB)).toBe(300 * MiB);
    expect(memoryLimitFrom({}, 0)).toBeUndefined();
    expect(memoryLimitFrom({}, 18446744073709552000)).toBeUndefined();
    expect(memoryLimitFrom({}, undefined)).toBeUndefined();
  });
});
