import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parse } from "yaml";

// Runs action.yml's `run:` steps as GitHub's runner does for a composite action: each script with
// `bash --noprofile --norc -eo pipefail`, its `env:` expressions resolved from the inputs and the
// earlier steps' outputs, a fresh GITHUB_OUTPUT file per step, GITHUB_PATH added to PATH for the
// steps after. `uses:` steps are not run (setup-node: Node is this one; upload-artifact: the test
// serves the file itself); they are returned, resolved, for the test to check.

type Step = {
  id?: string;
  name?: string;
  if?: string;
  uses?: string;
  run?: string;
  shell?: string;
  env?: Record<string, string>;
  with?: Record<string, string>;
};
export type ActionFile = {
  inputs: Record<string, { default?: string; required?: boolean }>;
  runs: { using: string; steps: Step[] };
};

export type ActionRun = {
  /** Exit code of the first failing step (as the job would end), or 0. */
  code: number;
  log: string;
  outputs: Record<string, Record<string, string>>;
  /** The `uses:` steps, with their `with:` resolved (null where an expression is not known here). */
  skipped: Array<{ uses: string; if?: string; with: Record<string, string | null> }>;
};

export const readAction = async (file: string) => parse(await readFile(file, "utf8")) as ActionFile;

const EXPRESSION = /\$\{\{\s*([^}]+?)\s*\}\}/g;

export async function runAction(
  action: ActionFile,
  given: { inputs: Record<string, string>; env: Record<string, string>; github: Record<string, string> },
): Promise<ActionRun> {
  const inputs: Record<string, string> = {};
  for (const [name, spec] of Object.entries(action.inputs)) {
    const value = given.inputs[name] ?? spec.default ?? "";
    if (spec.required && value === "") throw new Error(`input ${name} is required`);
    inputs[name] = value;
  }
  const outputs: Record<string, Record<string, string>> = {};
  const resolve = (text: string, strict: boolean): string | null => {
    let unknown = false;
    const value = text.replace(EXPRESSION, (_all, expression: string) => {
      const input = /^inputs\.([\w-]+)$/.exec(expression);
      if (input) return inputs[input[1]!] ?? "";
      const output = /^steps\.([\w-]+)\.outputs\.([\w-]+)$/.exec(expression);
      if (output) return outputs[output[1]!]?.[output[2]!] ?? "";
      const context = /^github\.([\w.]+)$/.exec(expression);
      if (context && context[1]! in given.github) return given.github[context[1]!]!;
      if (strict) throw new Error(`expression not known to the test's runner: ${expression}`);
      unknown = true;
      return "";
    });
    return unknown ? null : value;
  };
  for (const [name, value] of Object.entries(inputs)) inputs[name] = resolve(value, true)!;

  const temp = given.env.RUNNER_TEMP!;
  let path = given.env.PATH!;
  let log = "";
  const skipped: ActionRun["skipped"] = [];
  for (const [index, step] of action.runs.steps.entries()) {
    if (step.uses) {
      const resolved = Object.fromEntries(
        Object.entries(step.with ?? {}).map(([k, v]) => [k, resolve(String(v), false)]),
      );
      skipped.push({ uses: step.uses, ...(step.if ? { if: step.if } : {}), with: resolved });
      continue;
    }
    if (step.if) throw new Error(`step ${index} has an if: this runner does not evaluate conditions`);
    if (step.shell !== "bash") throw new Error(`step ${index}: shell must be bash`);
    const files = { GITHUB_OUTPUT: join(temp, `output-${index}`), GITHUB_PATH: join(temp, `path-${index}`) };
    await Promise.all(Object.values(files).map((file) => writeFile(file, "")));
    const env: Record<string, string> = { ...given.env, ...files, PATH: path };
    for (const [name, value] of Object.entries(step.env ?? {})) env[name] = resolve(String(value), true)!;
    const script = join(temp, `step-${index}.sh`);
    await writeFile(script, step.run!);
    const code = await new Promise<number>((done) => {
      const child = execFile(
        "bash",
        ["--noprofile", "--norc", "-eo", "pipefail", script],
        { cwd: given.env.GITHUB_WORKSPACE, env, timeout: 240_000, maxBuffer: 64 * 1024 * 1024 },
        (error) => done(error ? (typeof error.code === "number" ? error.code : -1) : 0),
      );
      child.stdout?.on("data", (chunk: Buffer) => (log += chunk.toString()));
      child.stderr?.on("data", (chunk: Buffer) => (log += chunk.toString()));
    });
    if (step.id) outputs[step.id] = parseOutputs(await readFile(files.GITHUB_OUTPUT, "utf8"));
    const added = (await readFile(files.GITHUB_PATH, "utf8")).split("\n").filter(Boolean).reverse();
    path = [...added, path].join(":");
    if (code !== 0) return { code, log, outputs, skipped };
  }
  return { code: 0, log, outputs, skipped };
}

/** `name=value` lines (the action writes no multi-line values). */
const parseOutputs = (text: string) =>
  Object.fromEntries(
    text
      .split("\n")
      .filter((line) => line.includes("="))
      .map((line) => [line.slice(0, line.indexOf("=")), line.slice(line.indexOf("=") + 1)]),
  );
