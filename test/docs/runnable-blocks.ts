// Runnable documentation blocks (DEVELOPERS.md "Conventions"): a fenced ```sh block right after a
// `<!-- runnable -->` line (blank lines between allowed) is run by test/docs/runnable.e2e.test.ts, as Rust runs doctests.
// `<!-- runnable: SHELL -->` also runs SHELL first, unseen by readers (set-up, e.g. a change made
// live "in the UI"). Each command line must exit 0, or the code its comment names (`# exit 2`).
// Pure: text in, blocks and scripts out.

export type RunnableBlock = {
  /** Where the block's first command is, e.g. `README.md:120`. */
  at: string;
  /** Hidden set-up shell from the marker, or "". */
  before: string;
  commands: DocCommand[];
};

type DocCommand = { line: number; text: string; expectedExit: number };

const MARKER = /^<!--\s*runnable(?::\s*(.*?))?\s*-->\s*$/;
const SH_FENCE = /^```(sh|bash|shell)\s*$/;

/** The runnable blocks of one Markdown document; a marker not followed by a sh fence is an error. */
export function extractRunnableBlocks(file: string, markdown: string): RunnableBlock[] {
  const lines = markdown.split("\n");
  const blocks: RunnableBlock[] = [];
  for (let i = 0; i < lines.length; i++) {
    const marker = MARKER.exec(lines[i]!.trim());
    if (!marker) continue;
    let fence = i + 1;
    while (lines[fence]?.trim() === "") fence++; // prettier puts a blank line after the comment
    if (!SH_FENCE.test(lines[fence]?.trim() ?? ""))
      throw new Error(`${file}:${i + 1}: <!-- runnable --> must be followed by a \`\`\`sh block`);
    const start = fence + 1;
    let end = start;
    while (end < lines.length && !lines[end]!.trimStart().startsWith("```")) end++;
    if (end === lines.length) throw new Error(`${file}:${fence + 1}: the runnable block is never closed`);
    blocks.push({
      at: `${file}:${start + 1}`,
      before: marker[1] ?? "",
      commands: splitCommands(lines.slice(start, end), start + 1),
    });
    i = end;
  }
  return blocks;
}

/** One command per line; a line ending in `\` goes on; blank lines and whole-line comments are skipped. */
function splitCommands(lines: readonly string[], firstLine: number): DocCommand[] {
  const commands: DocCommand[] = [];
  let text = "";
  let line = 0;
  lines.forEach((raw, index) => {
    if (text === "" && (raw.trim() === "" || raw.trim().startsWith("#"))) return;
    if (text === "") line = firstLine + index;
    text += (text ? "\n" : "") + raw;
    if (raw.endsWith("\\")) return;
    commands.push({ line, text, expectedExit: expectedExitOf(text) });
    text = "";
  });
  if (text !== "") commands.push({ line, text, expectedExit: expectedExitOf(text) });
  return commands;
}

/** `plumb drift deploy --write   # exit 2: drift found and written` expects 2; otherwise 0. */
const expectedExitOf = (text: string): number => {
  const match = /\s#[^\n]*\bexit (\d+)\b[^\n]*$/.exec(text);
  return match ? Number(match[1]) : 0;
};

const quote = (text: string) => `'${text.replace(/'/g, `'\\''`)}'`;

/**
 * The bash script for a block: the hidden set-up, then each command as written, followed by a check
 * of its exit code that names the document line and stops the script (exit 90) on a mismatch.
 */
export function buildBlockScript(block: RunnableBlock, rewrite: (text: string) => string = (t) => t): string {
  const out = ["set -u"];
  if (block.before) {
    out.push(rewrite(block.before));
    out.push(
      `__rc=$?; if [ "$__rc" -ne 0 ]; then echo "set-up of ${block.at} exited $__rc" >&2; exit 90; fi`,
    );
  }
  const file = block.at.replace(/:\d+$/, "");
  for (const command of block.commands) {
    out.push(rewrite(command.text));
    out.push(
      `__rc=$?; if [ "$__rc" -ne ${command.expectedExit} ]; then printf '%s:%s exited %s, expected %s: %s\\n' ${quote(file)} ${command.line} "$__rc" ${command.expectedExit} ${quote(command.text)} >&2; exit 90; fi`,
    );
  }
  return `${out.join("\n")}\n`;
}
