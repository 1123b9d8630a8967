import type { Logger } from "../../logger.js";

// A reconcile's log, bound to its object, made only when a line is written at a level the logger
// writes. pino's child() serialises (and redacts) its bindings when it is made: the worker made two
// per reconcile, 8-11% of what a restart's in-sync reconciles allocated and kept past a young GC
// (docs/controller.md "Speed and memory"), for lines that at level warn are never written.

const LEVELS: ReadonlySet<string> = new Set(["trace", "debug", "info", "warn", "error", "fatal"]);
const silent = () => undefined;

/** `parent.child(bindings)`, made on the first line `parent`'s level lets through (once). */
export function lazyChild(parent: Logger, bindings: Record<string, unknown>): Logger {
  let child: Logger | undefined;
  const made = () => (child ??= parent.child(bindings));
  return new Proxy({} as Logger, {
    get(_target, property) {
      if (typeof property === "string" && LEVELS.has(property) && !parent.isLevelEnabled(property))
        return silent;
      const logger = made();
      const value: unknown = Reflect.get(logger, property, logger);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(logger) : value;
    },
    set: (_target, property, value) => Reflect.set(made(), property, value),
  });
}
