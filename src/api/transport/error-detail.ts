import type { ErrorDetail, ValidationIssue } from "../errors.js";

/**
 * What of an error's detail is kept: a server's 1 MiB `detail` or 100,000 issues went whole into the
 * message, the log line, the status record and a PR comment. Real details are a sentence or a few
 * issues. The clip comes after the redactor: clipped first, a secret cut in half by it would be one
 * the redactor no longer knows, and its first half would show.
 */
const MAX_DETAIL_CHARS = 2_000;
const MAX_ISSUES = 100;
/**
 * The whole of a 422's issues (every loc part, msg and type): each part cut to 2,000 alone still let
 * 100 issues of 100 loc parts hold ~400 KB in one error.
 */
export const MAX_KEPT_DETAIL_CHARS = 4_000;

const clip = (text: string): string =>
  text.length <= MAX_DETAIL_CHARS
    ? text
    : `${text.slice(0, MAX_DETAIL_CHARS)}… (${text.length - MAX_DETAIL_CHARS} more characters)`;

/**
 * The server's `detail`, or a short excerpt of a non-JSON error body, with the run's secrets (and
 * the key) redacted: a server may echo the request body. Of a 422 issue only `loc`, `msg` and `type`
 * are kept (FastAPI adds `input`, the value itself).
 */
export function parseDetail(text: string, scrub: (text: string) => string): ErrorDetail {
  if (text.trim() === "") return null;
  try {
    const body = JSON.parse(text) as { detail?: unknown };
    if (typeof body.detail === "string") return clip(scrub(body.detail));
    if (Array.isArray(body.detail)) return boundIssues(body.detail.filter(isIssue), scrub);
  } catch {
    // not JSON: fall through to the excerpt
  }
  // Redacted, then cut: cut first, a secret placed across the cut showed its first 7 characters.
  return scrub(text).slice(0, 200);
}

/** Characters and issues left out of a 422 list, for its closing note. */
type Left = { chars: number; issues: number };

/** The issues, redacted, while their text fits MAX_KEPT_DETAIL_CHARS; a closing note says what was left. */
function boundIssues(issues: ValidationIssue[], scrub: (text: string) => string): ValidationIssue[] {
  let room = MAX_KEPT_DETAIL_CHARS;
  const left: Left = { chars: 0, issues: Math.max(0, issues.length - MAX_ISSUES) };
  // Cut after redaction, within what is left of the whole budget.
  const take = (raw: string): string => {
    const text = clip(scrub(raw));
    const kept = text.slice(0, Math.max(0, room));
    room -= kept.length;
    left.chars += text.length - kept.length;
    return kept;
  };
  const kept: ValidationIssue[] = [];
  for (const issue of issues.slice(0, MAX_ISSUES)) {
    if (room <= 0) {
      left.issues += 1;
      continue;
    }
    kept.push({
      loc: issue.loc.slice(0, MAX_ISSUES).map((part) => (typeof part === "string" ? take(part) : part)),
      msg: take(issue.msg),
      type: typeof issue.type === "string" ? take(issue.type) : "",
    });
  }
  if (left.chars === 0 && left.issues === 0) return kept;
  const note = `… ${left.issues} more issues left out, and ${left.chars} characters of those kept (at most ${MAX_KEPT_DETAIL_CHARS} characters of a 422's issues are kept)`;
  return [...kept, { loc: [], msg: note, type: "plumb.truncated" }];
}

const isIssue = (value: unknown): value is ValidationIssue =>
  typeof value === "object" &&
  value !== null &&
  Array.isArray((value as ValidationIssue).loc) &&
  typeof (value as ValidationIssue).msg === "string";
