import { characters, NOT_A_MODEL } from "../http/validation-errors.js";
import {
  ORG_ROLES,
  WORKSPACE_ROLES,
  type OrgRole,
  type WorkspaceGrant,
  type WorkspaceRole,
} from "./types.js";

/** One entry of an HTTPValidationError (spec 2.6), worded like the public API's (FastAPI/pydantic). */
type ValidationIssue = { loc: Array<string | number>; msg: string; type: string };
export type Parsed<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

type Loc = ValidationIssue["loc"];
type Fields = Record<string, unknown>;

const isObject = (value: unknown): value is Fields =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

/** Checks the body is an object whose keys are all known; every unknown key is its own issue. */
function objectBody(body: unknown, known: readonly string[], issues: ValidationIssue[]): Fields | undefined {
  if (body === undefined || body === null) {
    issues.push({ loc: ["body"], msg: "Field required", type: "missing" });
    return undefined;
  }
  if (!isObject(body)) {
    issues.push({
      loc: ["body"],
      ...NOT_A_MODEL,
    });
    return undefined;
  }
  for (const key of Object.keys(body)) {
    if (!known.includes(key))
      issues.push({ loc: ["body", key], msg: "Extra inputs are not permitted", type: "extra_forbidden" });
  }
  return body;
}

function oneOf<T extends string>(
  value: unknown,
  allowed: readonly T[],
  loc: Loc,
  issues: ValidationIssue[],
): T | undefined {
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
  const quoted = allowed.map((a) => `'${a}'`);
  const list = quoted.length > 1 ? `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}` : quoted[0];
  issues.push({ loc, msg: `Input should be ${list}`, type: "enum" });
  return undefined;
}

function email(body: Fields, issues: ValidationIssue[]): string {
  const value = body.email;
  if (value === undefined) issues.push({ loc: ["body", "email"], msg: "Field required", type: "missing" });
  else if (typeof value !== "string" || !EMAIL.test(value.trim()) || value.length > 254) {
    issues.push({ loc: ["body", "email"], msg: "value is not a valid email address", type: "value_error" });
  } else return value.trim().toLowerCase(); // emails compare case-insensitively
  return "";
}

function workspaceName(value: unknown, loc: Loc, issues: ValidationIssue[]): string {
  // pydantic's constr(strip_whitespace=True, min_length=1, max_length=128), each bound its own error.
  const name = typeof value === "string" ? value.trim() : undefined;
  if (name === undefined) issues.push({ loc, msg: "Input should be a valid string", type: "string_type" });
  else if (name === "")
    issues.push({ loc, msg: `String should have at least ${characters(1)}`, type: "string_too_short" });
  else if (name.length > 128)
    issues.push({ loc, msg: `String should have at most ${characters(128)}`, type: "string_too_long" });
  else return name;
  return "";
}

/** `[{workspace, role}]`, each workspace at most once. */
function grants(value: unknown, loc: Loc, issues: ValidationIssue[]): WorkspaceGrant[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    issues.push({ loc, msg: "Input should be a valid list", type: "list_type" });
    return [];
  }
  const result: WorkspaceGrant[] = [];
  value.forEach((item: unknown, index) => {
    const here = [...loc, index];
    if (!isObject(item))
      return issues.push({
        loc: here,
        ...NOT_A_MODEL,
      });
    const workspace = workspaceName(item.workspace, [...here, "workspace"], issues);
    const role = oneOf(item.role, WORKSPACE_ROLES, [...here, "role"], issues);
    if (result.some((grant) => grant.workspace === workspace)) {
      issues.push({
        loc: [...here, "workspace"],
        msg: `Workspace ${workspace} is listed twice`,
        type: "value_error",
      });
    } else if (role !== undefined && workspace !== "") result.push({ workspace, role });
  });
  return result;
}

const done = <T>(issues: ValidationIssue[], value: T): Parsed<T> =>
  issues.length > 0 ? { ok: false, issues } : { ok: true, value };

export type SettingsPatch = { jit_provisioning_enabled?: boolean; invites_enabled?: boolean };

/** PATCH .../info: either or both booleans (spec 4.3); anything else is a 422. */
export function parseSettingsPatch(body: unknown): Parsed<SettingsPatch> {
  const issues: ValidationIssue[] = [];
  const fields = objectBody(body, ["jit_provisioning_enabled", "invites_enabled"], issues);
  const patch: SettingsPatch = {};
  for (const key of ["jit_provisioning_enabled", "invites_enabled"] as const) {
    const value = fields?.[key];
    if (value === undefined) continue;
    if (typeof value === "boolean") patch[key] = value;
    else issues.push({ loc: ["body", key], msg: "Input should be a valid boolean", type: "bool_type" });
  }
  return done(issues, patch);
}

export type SsoDefaultsPatch = { default_workspace_role?: WorkspaceRole; default_workspaces?: string[] };

export function parseSsoDefaultsPatch(body: unknown): Parsed<SsoDefaultsPatch> {
  const issues: ValidationIssue[] = [];
  const fields = objectBody(body, ["default_workspace_role", "default_workspaces"], issues);
  const patch: SsoDefaultsPatch = {};
  if (fields?.default_workspace_role !== undefined) {
    const role = oneOf(
      fields.default_workspace_role,
      WORKSPACE_ROLES,
      ["body", "default_workspace_role"],
      issues,
    );
    if (role !== undefined) patch.default_workspace_role = role;
  }
  const workspaces = fields?.default_workspaces;
  if (workspaces !== undefined) {
    if (!Array.isArray(workspaces)) {
      issues.push({
        loc: ["body", "default_workspaces"],
        msg: "Input should be a valid list",
        type: "list_type",
      });
    } else if (workspaces.length === 0) {
      issues.push({
        loc: ["body", "default_workspaces"],
        msg: "List should have at least 1 item after validation, not 0",
        type: "too_short",
      });
    } else {
      const names = workspaces.map((name: unknown, index) =>
        workspaceName(name, ["body", "default_workspaces", index], issues),
      );
      patch.default_workspaces = [...new Set(names)];
    }
  }
  return done(issues, patch);
}

export type PersonBody = { email: string; org_role: OrgRole; workspaces: WorkspaceGrant[] };

/** An invite, or a member an administrator adds: email, organization role, workspaces with roles. */
export function parsePerson(body: unknown): Parsed<PersonBody> {
  const issues: ValidationIssue[] = [];
  const fields = objectBody(body, ["email", "org_role", "workspaces"], issues);
  if (fields === undefined) return { ok: false, issues };
  const address = email(fields, issues);
  const orgRole =
    fields.org_role === undefined
      ? "Organization User"
      : oneOf(fields.org_role, ORG_ROLES, ["body", "org_role"], issues);
  const workspaces = grants(fields.workspaces, ["body", "workspaces"], issues);
  return done(issues, { email: address, org_role: orgRole ?? "Organization User", workspaces });
}

export type ScimUserBody = { email: string; groups: WorkspaceGrant[] };

/** A SCIM-provisioned user: each group maps to a workspace and the role it grants there. */
export function parseScimUser(body: unknown): Parsed<ScimUserBody> {
  const issues: ValidationIssue[] = [];
  const fields = objectBody(body, ["email", "groups"], issues);
  if (fields === undefined) return { ok: false, issues };
  const address = email(fields, issues);
  const groups = grants(fields.groups, ["body", "groups"], issues);
  return done(issues, { email: address, groups });
}

export function parseSignIn(body: unknown): Parsed<{ email: string }> {
  const issues: ValidationIssue[] = [];
  const fields = objectBody(body, ["email"], issues);
  if (fields === undefined) return { ok: false, issues };
  const address = email(fields, issues);
  return done(issues, { email: address });
}
