import { UUID_PATTERN } from "../../schema/common.js";

// The ids this server reads as FastAPI's uuid type does, in paths, X-Tenant-Id and bodies, the agent
// server's too (bodyUuid, sameId; docs/control-plane.md "Ids"). Apart from paging.ts, whose errors it does not need: the 422
// formatting (validation-errors.ts) reads ANY_UUID_PATTERN without a cycle through http-errors.ts.

const UUID = new RegExp(UUID_PATTERN);

const HEX = "[0-9a-fA-F]";
const HYPHENATED = `${HEX}{8}-${HEX}{4}-${HEX}{4}-${HEX}{4}-${HEX}{12}`;
/**
 * The spellings canonicalUuid reads, as a JSON schema pattern: a body's uuid fields
 * (deployments/body-schemas.ts); a mismatch is reported as uuid_parsing (validation-errors.ts).
 */
export const ANY_UUID_PATTERN = `^(?:${HYPHENATED}|${HEX}{32}|\\{${HYPHENATED}\\}|urn:uuid:${HYPHENATED})$`;

const HEX32 = /^[0-9a-f]{32}$/i;
const hyphenated = (hex: string) =>
  `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`.toLowerCase();

/**
 * A UUID in the forms FastAPI's typed parameters read (pydantic, by the uuid crate's parse_str):
 * hyphenated, 32 hex digits, `{hyphenated}` and `urn:uuid:hyphenated`, any case; as the canonical
 * lower-case hyphenated string, or undefined for anything else (docs/control-plane.md "Ids").
 */
export function canonicalUuid(value: string): string | undefined {
  if (UUID.test(value)) return value.toLowerCase();
  if (HEX32.test(value)) return hyphenated(value);
  const inner = value.startsWith("{") && value.endsWith("}") ? value.slice(1, -1) : undefined;
  const urn = value.startsWith("urn:uuid:") ? value.slice("urn:uuid:".length) : undefined;
  const wrapped = inner ?? urn;
  return wrapped !== undefined && UUID.test(wrapped) ? wrapped.toLowerCase() : undefined;
}

/** A uuid_parsing issue (validation-errors.ts's ValidationIssue, without importing it). */
type UuidIssue = { loc: Array<string | number>; msg: string; type: string };

/**
 * A body's uuid field (`thread_id`, `assistant_id`): every spelling the control plane's body uuids
 * take (hyphenated, 32 hex digits, braces, `urn:uuid:`, any case), as the canonical lower-case
 * hyphenated string; null when absent; anything else an issue (docs/control-plane.md "Ids").
 */
export function bodyUuid(value: unknown, loc: Array<string | number>, issues: UuidIssue[]): string | null {
  if (value === undefined || value === null) return null;
  const id = typeof value === "string" ? canonicalUuid(value) : undefined;
  if (id === undefined) issues.push({ loc, msg: "Input should be a valid UUID", type: "uuid_parsing" });
  return id ?? null;
}

/** An id that may be a uuid or not (an assistant's id or graph name, a checkpoint id): canonical when a uuid. */
export const sameId = (value: string): string => canonicalUuid(value) ?? value;
