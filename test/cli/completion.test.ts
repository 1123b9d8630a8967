import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import { completionCommand } from "../../src/cli/offline/completion.js";

// plumb completion: the scripts are generated from the commands, and each shell runs them. bash
// completions are asked for as bash asks (COMP_WORDS/COMP_CWORD); fish's own `complete -C` answers
// for fish; zsh checks the script's syntax and that it registers. zsh and fish come from Debian's
// packages (.ci/run installs them); off CI a machine without them skips those two.

const run = promisify(execFile);
const shell = (name: string) => existsSync(`/usr/bin/${name}`) || Boolean(process.env.CI);

async function script(name: "bash" | "zsh" | "fish"): Promise<string> {
  let out = "";
  await completionCommand(COMMANDS, { write: (t: string) => (out += t) }).parseAsync([name], {
    from: "user",
  });
  const file = join(await mkdtemp(join(tmpdir(), "plumb-completion-")), `plumb.${name}`);
  await writeFile(file, out);
  return file;
}

async function bashComplete(file: string, line: string[]): Promise<string[]> {
  const words = line.map((w) => `'${w}'`).join(" ");
  const { stdout } = await run("bash", [
    "-c",
    `source '${file}'; COMP_WORDS=(${words}); COMP_CWORD=${line.length - 1}; _plumb; printf '%s\\n' "\${COMPREPLY[@]}"`,
  ]);
  return stdout.split("\n").filter(Boolean);
}

describe("plumb completion bash", () => {
  it("completes commands, each command's flags, and flag values from their choices", async () => {
    const file = await script("bash");
    expect(await bashComplete(file, ["plumb", "pl"])).toEqual(["plan"]);
    expect(await bashComplete(file, ["plumb", "co"])).toEqual(["completion", "control-plane", "controller"]);
    expect(await bashComplete(file, ["plumb", "apply", "--out"])).toEqual(["--output"]);
    expect(await bashComplete(file, ["plumb", "plan", "--output", ""])).toEqual(["text", "json", "markdown"]);
    expect(await bashComplete(file, ["plumb", "validate", "-o", "s"])).toEqual(["sarif"]);
    expect(await bashComplete(file, ["plumb", "controller", "--no"])).toEqual([
      "--notify",
      "--notify-file",
      "--notify-secret-file",
    ]);
    // A value that is a name or a duration is not completed as a file.
    expect(await bashComplete(file, ["plumb", "apply", "--timeout", ""])).toEqual([]);
  });
});

it("keeps apostrophes in descriptions as ’ (quoted safely in every shell), not as spaces", async () => {
  const { readFile } = await import("node:fs/promises");
  for (const name of ["zsh", "fish"] as const) {
    const text = await readFile(await script(name), "utf8");
    expect(text).toContain("plumb\u2019s commands");
    expect(text).not.toMatch(/plumb s commands|manifests current/);
  }
});

describe.skipIf(!shell("fish"))("plumb completion fish", () => {
  it("fish completes commands, flags and values with the script", async () => {
    const file = await script("fish");
    const ask = async (line: string) =>
      (await run("fish", ["--no-config", "-c", `source '${file}'; complete -C '${line}'`])).stdout
        .split("\n")
        .map((l) => l.split("\t")[0])
        .filter(Boolean);
    expect(await ask("plumb val")).toEqual(["validate"]);
    expect(await ask("plumb plan --output ")).toEqual(["json", "markdown", "text"]);
    expect(await ask("plumb controller --notify-s")).toEqual(["--notify-secret-file"]);
  });
});

describe.skipIf(!shell("zsh"))("plumb completion zsh", () => {
  it("is valid zsh that registers _plumb for plumb after compinit", async () => {
    const file = await script("zsh");
    await run("zsh", ["-n", file]);
    const { stdout } = await run("zsh", [
      "-f",
      "-c",
      `autoload -U compinit && compinit -u -D; source '${file}'; print -r -- $_comps[plumb]`,
    ]);
    expect(stdout.trim()).toBe("_plumb");
  });
});
