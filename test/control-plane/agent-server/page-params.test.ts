import { describe, expect, it } from "vitest";
import {
  limitParam,
  pageParams,
  type ValidationIssue,
} from "../../../src/control-plane/agent-server/validation.js";

// The paging of thread search and the store's searches, and the limit of a thread's history: one
// rule, the open-source server's messages.

const check = (body: Record<string, unknown>, fallback = 10) => {
  const issues: ValidationIssue[] = [];
  const page = pageParams(body, fallback, issues);
  return { page, refused: issues.map((issue) => issue.loc.join(".")) };
};

describe("pageParams", () => {
  it("takes the fallback limit and offset 0 when absent or null", () => {
    expect(check({})).toEqual({ page: { limit: 10, offset: 0 }, refused: [] });
    expect(check({ limit: null, offset: null }, 100)).toEqual({
      page: { limit: 100, offset: 0 },
      refused: [],
    });
    expect(check({ limit: 1000, offset: 5 })).toEqual({ page: { limit: 1000, offset: 5 }, refused: [] });
  });

  it("refuses a limit outside 1-1,000 or not an integer, and a negative or fractional offset", () => {
    for (const limit of [0, 1001, 1.5, "5", true]) expect(check({ limit }).refused).toEqual(["body.limit"]);
    for (const offset of [-1, 0.5, "0"]) expect(check({ offset }).refused).toEqual(["body.offset"]);
    expect(check({ limit: 0, offset: -1 }).refused).toEqual(["body.limit", "body.offset"]);
  });
});

describe("limitParam (a thread's history)", () => {
  const limitOf = (body: Record<string, unknown>) => {
    const issues: ValidationIssue[] = [];
    return { limit: limitParam(body, 10, issues), refused: issues.map((issue) => issue.loc.join(".")) };
  };
  it("takes the fallback when absent or null, and 1 and 1,000 as given", () => {
    expect(limitOf({})).toEqual({ limit: 10, refused: [] });
    expect(limitOf({ limit: null })).toEqual({ limit: 10, refused: [] });
    expect(limitOf({ limit: 1 }).refused).toEqual([]);
    expect(limitOf({ limit: 1000 }).refused).toEqual([]);
  });
  it("refuses 0, 1,001, a fraction and a string at body.limit", () => {
    for (const limit of [0, 1001, 1.5, "5"]) expect(limitOf({ limit }).refused).toEqual(["body.limit"]);
  });
});
