import { MARKDOWN_LIMIT } from "./format-markdown.js";

// Markdown of a command run over several environments (`plan --env a --env b -o markdown`, a
// pull-request comment): each environment's document under `## Environment NAME`, the whole under
// MARKDOWN_LIMIT as one environment's document is. Each was bounded alone, so N environments made a
// comment of up to N x 65,000 characters, which GitHub refuses (65,536 at most): the comment step
// of a CI job failed and the plan was not shown at all.

/** One environment's part: its name and its document as the command wrote it. */
export type EnvironmentPart = { name: string; text: string };

const heading = (name: string) => `## Environment ${name}\n\n`;

const note = (name: string, left: number) =>
  `\n> **Truncated:** ${left} more characters of environment ${name}'s output not shown, to keep this comment under GitHub's size limit. Run the command with \`--env ${name}\` alone for all of it.\n\n`;

const droppedNote = (names: readonly string[]) =>
  `> **Truncated:** environments ${names.join(", ")} not shown, to keep this comment under GitHub's size limit. Run the command with \`--env NAME\` for each.\n`;

/** A line that opens or closes a fenced code block: its character and length. */
const FENCE = /^ {0,3}(`{3,}|~{3,})/;

/**
 * The offsets (line starts) where `text` may be cut and stay well formed: outside any fenced code
 * block and any `<details>` section. Cut inside one, the rest of the comment (the note, the next
 * environment) would be read as code or hidden in the section.
 */
function safeCuts(text: string): number[] {
  const cuts = [0];
  let fence: { char: string; length: number } | null = null;
  let depth = 0;
  let at = 0;
  while (at < text.length) {
    const end = text.indexOf("\n", at);
    const next = end === -1 ? text.length : end + 1;
    const line = text.slice(at, end === -1 ? text.length : end);
    const marker = FENCE.exec(line)?.[1];
    if (fence) {
      if (marker?.[0] === fence.char && marker.length >= fence.length && line.trim() === marker) fence = null;
    } else if (marker) fence = { char: marker[0]!, length: marker.length };
    else {
      depth += (line.match(/<details[\s>]/gi) ?? []).length;
      depth = Math.max(0, depth - (line.match(/<\/details>/gi) ?? []).length);
    }
    if (fence === null && depth === 0 && end !== -1) cuts.push(next);
    at = next;
  }
  return cuts;
}

/** `text` within `budget` characters, cut at a safe place and ending with a note of what was left. */
function cutMarkdown(text: string, budget: number, name: string): string {
  if (text.length <= budget) return text;
  const room = budget - note(name, text.length).length;
  const cut = safeCuts(text)
    .filter((at) => at <= room)
    .reduce((a, b) => Math.max(a, b), 0);
  return `${text.slice(0, cut)}${note(name, text.length - cut)}`;
}

/**
 * Each part's share of `budget`: a part under an even share keeps all it needs, the rest is shared
 * evenly among the larger ones (a short environment is never cut for a long one's sake).
 */
function fairShares(sizes: readonly number[], budget: number): number[] {
  const shares = sizes.map(() => 0);
  const order = sizes.map((_, i) => i).sort((a, b) => sizes[a]! - sizes[b]!);
  let left = Math.max(0, budget);
  for (const [k, i] of order.entries()) {
    shares[i] = Math.min(sizes[i]!, Math.floor(left / (order.length - k)));
    left -= shares[i];
  }
  return shares;
}

/**
 * The environments' documents, each under its heading, within `limit` characters: whole when they
 * fit; else each cut to its fair share, saying what was left out; and past that (too many
 * environments for even their notes) the last ones are left out, named.
 */
export function formatEnvironmentsMarkdown(
  parts: readonly EnvironmentPart[],
  limit = MARKDOWN_LIMIT,
): string {
  const whole = parts.map((p) => heading(p.name) + p.text).join("");
  if (whole.length <= limit) return whole;
  for (let kept = parts.length; kept >= 0; kept -= 1) {
    const shown = parts.slice(0, kept);
    const dropped = parts.slice(kept).map((p) => p.name);
    const closing = dropped.length > 0 ? droppedNote(dropped) : "";
    const headings = shown.reduce((n, p) => n + heading(p.name).length, 0);
    const shares = fairShares(
      shown.map((p) => p.text.length),
      limit - headings - closing.length,
    );
    const out = shown.map((p, i) => heading(p.name) + cutMarkdown(p.text, shares[i]!, p.name)).join("");
    if (out.length + closing.length <= limit) return out + closing;
  }
  return droppedNote(parts.map((p) => p.name)).slice(0, limit);
}
