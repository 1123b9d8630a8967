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
  /** apply stopped after `after`: JSON names each environment not applied. */
  notApplied(names: readonly string[], after: string): void;
  /** Writes the JSON or Markdown document; once, when the command ends (also with an error). */
  end(): void;
};

/** The command's JSON for one environment, with `environment` on it and on each of its changes. */
function withEnvironment(text: string, environment: string): unknown {
  if (text.trim() === "") return { environment };
  const value = JSON.parse(text) as Record<string, unknown>;
  const mark = (changes: unknown) =>
    Array.isArray(changes) ? changes.map((c: object) => ({ ...c, environment })) : changes;
  const plan = value.plan as Record<string, unknown> | undefined;
  return {
    environment,
    ...value,
    ...(value.changes ? { changes: mark(value.changes) } : {}),
    ...(value.results ? { results: mark(value.results) } : {}),
    ...(value.objects ? { objects: mark(value.objects) } : {}),
    ...(plan?.changes ? { plan: { ...plan, changes: mark(plan.changes) } } : {}),
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
      const part = format === "markdown" ? parts.findLast((p) => p.name === name) : undefined;
      if (part)
        part.text += `${part.text === "" ? "" : "\n"}> **Failed:** ${markdownText(error.message)} ${markdownCode(`[${error.code}]`, false)}\n`;
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
