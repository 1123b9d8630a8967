import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";

describe("plumb program", () => {
  it("is named plumb and describes itself", () => {
    const program = buildProgram();
    expect(program.name()).toBe("plumb");
    expect(program.helpInformation()).toContain("GitOps reconciler");
  });
});

describe("--help of every command", () => {
  it("never shows a raw default such as (default: []) or (default: undefined)", () => {
    for (const command of buildProgram().commands) {
      const help = command.helpInformation();
      expect(help, `plumb ${command.name()} --help`).not.toMatch(/\(default: (\[\]|undefined|\{\})\)/);
    }
    const plan = buildProgram().commands.find((c) => c.name() === "plan")!;
    expect(plan.helpInformation()).toMatch(/--target <name>[\s\S]*\(default: every\s+object\)/);
  });
});
