import { describe, expect, it } from "vitest";
import { pageParams, type ValidationIssue } from "../../../src/control-plane/agent-server/validation.js";

// The paging of thread search and the store's searches: one rule, the open-source server's messages.

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
