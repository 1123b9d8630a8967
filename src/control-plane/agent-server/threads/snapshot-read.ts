import { PlumbError } from "../../../errors.js";

// Reading one part of the agent server's saved snapshot: a map of deployment id → list, checked
// whole so that a damaged file is reported, not half-loaded.

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/** `data[field]` as deployment id → items (empty when the snapshot predates the field). */
export function readPerDeployment<T>(
  data: unknown,
  field: string,
  what: string,
  isItem: (item: unknown) => boolean,
): Record<string, T[]> {
  if (!isRecord(data) || data[field] === undefined) return {};
  const byDeployment = data[field];
  const valid =
    isRecord(byDeployment) &&
    Object.values(byDeployment).every((list) => Array.isArray(list) && list.every(isItem));
  if (!valid)
    throw new PlumbError(
      "state-corrupt",
      `The saved ${what} of the agent server are not readable; move the data directory aside to start empty.`,
    );
  return byDeployment as Record<string, T[]>;
}
