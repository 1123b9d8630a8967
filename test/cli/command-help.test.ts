import { readFileSync } from "node:fs";
import type { Command } from "commander";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import { buildProgram } from "../../src/cli/main.js";

// Every command's --help ends with examples to copy, each naming only flags the command has, and
// README's heading of each command names only flags it has. `plumb plan --help` showed no command
// line at all, and a flag renamed in the code left README's heading (and an example) behind.

const README = readFileSync(new URL("../../README.md", import.meta.url), "utf8");

async function helpOf(name: string): Promise<{ command: Command; text: string }> {
  const command = await COMMANDS[name]!();
  let text = "";
  command.configureOutput({ writeOut: (t) => (text += t), writeErr: (t) => (text += t) });
  command.outputHelp();
  return { command, text };
}

const flagsIn = (text: string) => [...text.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((m) => m[0]);

function unknownFlags(command: Command, text: string): string[] {
  const longs = new Set(command.options.map((o) => o.long));
  return flagsIn(text).filter((f) => !longs.has(f) && !longs.has(f.replace(/^--no-/, "--")));
}

describe("plumb COMMAND --help", () => {
  for (const name of Object.keys(COMMANDS)) {
    it(`${name}: examples naming only its own flags`, async () => {
      const { command, text } = await helpOf(name);
      const section = /\n(Examples|Install):\n([\s\S]*)$/.exec(text);
      expect(section, text).not.toBeNull();
      const lines = section![2]!.split("\n").filter((l) => l.trim() !== "");
      const uses = lines.filter((l) => l.includes(`plumb ${name}`));
      expect(uses.length, section![2]).toBeGreaterThan(0);
      // Flags of the example commands (comments after # are prose).
      const commandText = uses.map((l) => l.replace(/\s#\s.*$/, "").split(`plumb ${name}`)[1]).join(" ");
      expect(unknownFlags(command, commandText)).toEqual([]);
    });
  }

  it("README's heading of each command names only flags the command has", async () => {
    for (const name of Object.keys(COMMANDS)) {
      const { command } = await helpOf(name);
      const headings = README.split("\n").filter((l) => l.startsWith(`### \`plumb ${name} `));
      expect(headings.length, name).toBeGreaterThan(0);
      expect(unknownFlags(command, headings.join(" ")), name).toEqual([]);
    }
  });
});

describe("plumb --help", () => {
  // It listed the commands and nothing else: no command line to start from, no word of
  // PLUMB_API_URL or PLUMB_API_KEY, no exit code.
  async function programHelp(): Promise<string> {
    const program = await buildProgram();
    let text = "";
    program.configureOutput({ writeOut: (t) => (text += t), writeErr: (t) => (text += t) });
    program.outputHelp();
    return text;
  }

  it("ends with a quick start, where the settings come from, and the exit codes", async () => {
    const text = await programHelp();
    expect(text).toMatch(/\nQuick start:\n {2}\$ plumb /);
    for (const name of ["PLUMB_API_URL", "PLUMB_API_KEY", "PLUMB_TENANT_ID", "--api-key-file"])
      expect(text).toContain(name);
    for (const line of text.split("\n")) expect(line.length, line).toBeLessThan(100);
  });

  it("its exit codes are README's, word for word", async () => {
    const text = await programHelp();
    const section = README.split("## Exit codes")[1]!.split("\n## ")[0]!;
    const rows = [...section.matchAll(/^\| ([\d /]+?)\s+\| (.+?)\s+\|$/gm)].map(
      (m) => [m[1]!, m[2]!] as const,
    );
    expect(rows.length).toBeGreaterThanOrEqual(6);
    const listed = text.split("\nExit codes:\n")[1]!;
    for (const [code, meaning] of rows)
      expect(listed).toMatch(new RegExp(`^ {2}${code} +${escape(meaning)}$`, "m"));
  });
});

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
