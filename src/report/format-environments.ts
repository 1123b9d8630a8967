import type { PlumbError } from "../errors.js";
import { errorObject, failedRunOf } from "./format-error-json.js";
import { type EnvironmentPart, formatEnvironmentsMarkdown } from "./markdown/environments-markdown.js";
import { markdownCode, markdownText } from "./markdown/markdown-text.js";

// The output of a command run once per environment (src/cli/environments.ts): text as each
// environment runs, under its heading; JSON and Markdown as one document at the end, JSON's an
// entry per environment, Markdown's bounded as a whole (markdown/environments-markdown.ts).

type Write = { write: (text: string) => unknown };

export type EnvironmentsOutput = {
  /** Where environment `name`'s run writes (text: after its heading, straight through). */
  start(name: string): Write;
  /** Its run returned: JSON keeps what it wrote as its entry. */
  ran(name: string): void;
  /** Its run failed with `error`: JSON's entry is the error, as a failed command's document has it. */
  failed(name: string, error: PlumbError): void;
  /** Its run was skipped (`why`: none of --target's objects runs there): said in every format. */
  skipped(name: string, why: string): void;
  /** apply stopped after `after`: JSON names each environment not applied. */
  notApplied(names: readonly string[], after: string): void;
  /** Writes the JSON or Markdown document; once, when the command ends (also with an error). */
  end(): void;
};

/**
 * The lists of a command's JSON whose entries each name an object: plan's changes, apply's results,
 * status's objects, drift's items and not_checked, adopt's recorded and skipped. Drift's and
 * adopt's carried no `environment`, so a consumer of a flattened list could not tell prod's drift
 * from staging's.
 */
const PER_OBJECT = ["changes", "results", "objects", "items", "not_checked", "recorded", "skipped"];

/** The command's JSON for one environment, with `environment` on it and on each entry of its lists. */
function withEnvironment(text: string, environment: string): unknown {
  if (text.trim() === "") return { environment };
  const value = JSON.parse(text) as Record<string, unknown>;
  const mark = (list: unknown) =>
    Array.isArray(list) ? list.map((c: object) => ({ ...c, environment })) : list;
  const marked = (object: Record<string, unknown>) =>
    Object.fromEntries(PER_OBJECT.filter((key) => key in object).map((key) => [key, mark(object[key])]));
  const plan = value.plan as Record<string, unknown> | undefined;
  return {
    environment,
    ...value,
    ...marked(value),
    ...(plan?.changes ? { plan: { ...plan, ...marked(plan) } } : {}),
  };
}

export function environmentsOutput(format: string | undefined, stdout: Write): EnvironmentsOutput {
  const entries: unknown[] = [];
  const parts: EnvironmentPart[] = [];
  let captured: string[] = [];
  let ended = false;
  const capture = (name: string): Write => {
    captured = [];
    if (format === "markdown") parts.push({ name, text: "" });
    const part = parts.at(-1);
    return {
      write: (text: string) => {
        captured.push(text);
        if (part) part.text += text;
      },
    };
  };
  return {
    start(name) {
      if (format === "json" || format === "markdown") return capture(name);
      stdout.write(`== environment ${name} ==\n`);
      return stdout;
    },
    ran(name) {
      if (format === "json") entries.push(withEnvironment(captured.join(""), name));
    },
    // Markdown says it under the environment's heading: its section was left empty (a pull-request
    // comment read as if the environment had nothing to say), and one not applied was left out.
    failed(name, error) {
      if (format === "json") entries.push({ environment: name, error: errorObject(failedRunOf(error)) });
      // Text: the report under its heading says so; it was left empty, the error on stderr only, and
      // `plumb drift > report.txt` read as staging having nothing to report.
      if (format !== "json" && format !== "markdown")
        stdout.write(`! environment ${name} failed [${error.code}]: not reported (the error is on stderr)\n`);
      const part = format === "markdown" ? parts.findLast((p) => p.name === name) : undefined;
      if (part)
        part.text += `${part.text === "" ? "" : "\n"}> **Failed:** ${markdownText(error.message)} ${markdownCode(`[${error.code}]`, false)}\n`;
    },
    skipped(name, why) {
      if (format === "json") entries.push({ environment: name, skipped: why });
      else if (format === "markdown") parts.at(-1)!.text += `> **Skipped:** ${markdownText(why)}\n`;
      else stdout.write(`skipped: ${why}\n`);
    },
    notApplied(names, after) {
      if (format === "json")
        for (const name of names) entries.push({ environment: name, not_applied: after });
      if (format === "markdown")
        for (const name of names)
          parts.push({
            name,
            text: `> **Not applied:** environment ${after} did not converge before it, so nothing was sent here.\n`,
          });
    },
    end() {
      if (ended) return;
      ended = true;
      if (format === "json") stdout.write(`${JSON.stringify({ environments: entries }, null, 2)}\n`);
      if (format === "markdown") stdout.write(formatEnvironmentsMarkdown(parts));
    },
  };
}
