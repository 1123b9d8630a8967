import type { ValidationIssue } from "./body-fields.js";

// The stream modes a run or a join may ask for, read from a body or a query.

const STREAM_MODES = [
  "values",
  "updates",
  "messages",
  "messages-tuple",
  "events",
  "debug",
  "custom",
  "tasks",
  "checkpoints",
] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

/** A stream mode or a list of them (body or repeated query parameter); undefined when absent. */
export function parseStreamModes(
  raw: unknown,
  loc: ValidationIssue["loc"],
  issues: ValidationIssue[],
): StreamMode[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const list = Array.isArray(raw) ? (raw as unknown[]) : [raw];
  const modes: StreamMode[] = [];
  for (const [index, mode] of list.entries()) {
    if (typeof mode === "string" && (STREAM_MODES as readonly string[]).includes(mode)) {
      if (!modes.includes(mode as StreamMode)) modes.push(mode as StreamMode);
    } else {
      issues.push({
        loc: Array.isArray(raw) ? [...loc, index] : loc,
        msg: `Input should be ${STREAM_MODES.map((m) => `'${m}'`).join(", ")}`,
        type: "enum",
      });
    }
  }
  return modes;
}
