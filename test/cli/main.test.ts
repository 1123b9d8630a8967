import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";

describe("plumb program", () => {
  it("is named plumb and describes itself", () => {
    const program = buildProgram();
    expect(program.name()).toBe("plumb");
    expect(program.helpInformation()).toContain("GitOps reconciler");
  });
});
