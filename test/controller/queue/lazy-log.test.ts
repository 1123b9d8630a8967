import { Writable } from "node:stream";
import { describe, expect, it, vi } from "vitest";
import { createLogger } from "../../../src/logger.js";
import { lazyChild } from "../../../src/controller/queue/lazy-log.js";

/** A real pino logger at `level` writing into memory, with a count of the children it made. */
function logger(level: string) {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      lines.push(...chunk.toString().trim().split("\n"));
      done();
    },
  });
  const log = createLogger({ level, name: "plumb-controller" }, stream);
  const child = vi.spyOn(log, "child");
  return { log, child, lines: () => lines.map((line) => JSON.parse(line) as Record<string, unknown>) };
}

const bindings = { kind: "Deployment", object: "alpha", id: null, revision: null, commit: null };

describe("lazyChild", () => {
  it("makes no child for lines the level drops (an in-sync reconcile at level warn)", () => {
    const l = logger("warn");
    const log = lazyChild(l.log, bindings);
    log.info({ result: "in-sync" }, "reconciled");
    log.debug({ step: "plan" }, "planned");
    expect(l.child).not.toHaveBeenCalled();
    expect(l.lines()).toEqual([]);
  });

  it("makes the child once, at the first line written, and every line carries the bindings once", () => {
    const l = logger("info");
    const log = lazyChild(l.log, bindings);
    expect(l.child).not.toHaveBeenCalled();
    log.info({ result: "in-sync" }, "reconciled");
    log.warn({ fields: ["image"] }, "drift detected");
    log.debug({ step: "plan" }, "not written");
    expect(l.child).toHaveBeenCalledTimes(1);
    expect(l.child).toHaveBeenCalledWith(bindings);
    expect(l.lines()).toEqual([
      expect.objectContaining({
        ...bindings,
        name: "plumb-controller",
        result: "in-sync",
        msg: "reconciled",
      }),
      expect.objectContaining({ ...bindings, fields: ["image"], msg: "drift detected" }),
    ]);
  });

  it("answers the child's other members (isLevelEnabled, level) as the child does", () => {
    const l = logger("warn");
    const log = lazyChild(l.log, bindings);
    expect(log.isLevelEnabled("info")).toBe(false);
    expect(log.isLevelEnabled("error")).toBe(true);
    expect(log.level).toBe("warn");
  });
});
