import { describe, expect, it, vi } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import { buildProgram, main } from "../../src/cli/main.js";
import { PLUMB_VERSION } from "../../src/cli/options.js";

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

describe("plumb --version", () => {
  it("prints the version without loading any command (all of them took 0.6-1 s)", async () => {
    const loaded: string[] = [];
    const original = { ...COMMANDS };
    for (const [name, load] of Object.entries(original)) COMMANDS[name] = () => (loaded.push(name), load());
    const write = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      for (const flag of ["--version", "-V"]) {
        expect(await main(["node", "plumb", flag])).toBe(0);
        expect(write).toHaveBeenLastCalledWith(`${PLUMB_VERSION}\n`);
      }
      expect(loaded).toEqual([]);
      // With a command named, that command is loaded (its own --version is commander's error).
      await main(["node", "plumb", "validate", "--version"]).catch(() => undefined);
      expect(loaded).toEqual(["validate"]);
    } finally {
      write.mockRestore();
      Object.assign(COMMANDS, original);
    }
  });
});
