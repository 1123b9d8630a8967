import { describe, expect, it } from "vitest";
import { buildProgram } from "../../src/cli/main.js";

describe("plumb program", () => {
  it("is named plumb and describes itself", async () => {
    const program = await buildProgram();
    expect(program.name()).toBe("plumb");
    expect(program.helpInformation()).toContain("GitOps reconciler");
  });
});

describe("loading commands", () => {
  it("loads only the command the command line names, and every command otherwise", async () => {
    const all = (await buildProgram()).commands.map((c) => c.name());
    expect(all).toEqual(expect.arrayContaining(["validate", "plan", "apply", "controller", "control-plane"]));
    expect((await buildProgram("validate")).commands.map((c) => c.name())).toEqual(["validate"]);
    // Not a command (help, a typo, an inherited property name): all of them, for help and suggestions.
    for (const other of ["help", "valdate", "constructor", "__proto__"])
      expect((await buildProgram(other)).commands.map((c) => c.name())).toEqual(all);
  });
});

describe("--help of every command", () => {
  it("never shows a raw default such as (default: []) or (default: undefined)", async () => {
    for (const command of (await buildProgram()).commands) {
      // Wrapping may split "(default:" from its value: the text is read with its line breaks joined.
      const help = command.helpInformation().replace(/\s+/g, " ");
      expect(help, `plumb ${command.name()} --help`).not.toMatch(/\(default: (\[\]|undefined|\{\})\)/);
    }
    const plan = (await buildProgram()).commands.find((c) => c.name() === "plan")!;
    expect(plan.helpInformation()).toMatch(/--target <name>[\s\S]*\(default:\s+every\s+object\)/);
  });
});
