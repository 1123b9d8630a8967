import type { FastifyInstance } from "fastify";
import { unprocessable } from "../http-errors.js";

// PostgreSQL, the store of the hosted service, cannot hold U+0000 in text or jsonb ("invalid byte
// sequence for encoding UTF8: 0x00", "unsupported Unicode escape sequence"): a service that passed
// it on would answer 500 after doing half the work. A careful one refuses it up front, 422 naming the
// field (docs/control-plane.md "NUL characters"), and so does this server, before anything is stored.

const NUL = "\u0000";
const MSG = "Value error, a string may not contain the NUL character (U+0000): it cannot be stored";

/** Where in a parsed JSON value a key or string holds U+0000, as a 422 `loc` after "body". */
export function nulPathOf(
  value: unknown,
  path: Array<string | number> = [],
): Array<string | number> | undefined {
  if (typeof value === "string") return value.includes(NUL) ? path : undefined;
  if (typeof value !== "object" || value === null) return undefined;
  const entries: Array<[string | number, unknown]> = Array.isArray(value)
    ? value.map((v, i) => [i, v])
    : Object.entries(value);
  for (const [key, item] of entries) {
    if (typeof key === "string" && key.includes(NUL)) return [...path, key];
    const found = nulPathOf(item, [...path, key]);
    if (found !== undefined) return found;
  }
  return undefined;
}

export const nulIssue = (loc: Array<string | number>) =>
  unprocessable([{ loc, msg: MSG, type: "value_error" }]);

/** A query parameter that holds U+0000 (`?name_contains=%00`) is a 422 too, before any route reads it. */
export function installQueryNulCheck(app: FastifyInstance): void {
  app.addHook("preValidation", (request, _reply, done) => {
    const query = (request.query ?? {}) as Record<string, unknown>;
    for (const [name, raw] of Object.entries(query)) {
      const values: unknown[] = Array.isArray(raw) ? raw : [raw];
      if (name.includes(NUL) || values.some((v) => typeof v === "string" && v.includes(NUL)))
        return done(nulIssue(["query", name]));
    }
    done();
  });
}
