// What a GitHub Flavored Markdown reader would take as markup in a comment, outside code: the
// tests' stand-in for rendering it. Each hit names a line and what it found there.

const OUR_TAGS = /<\/?(?:details|summary|code)>/g;

/** `line` with code spans, `<code>` elements and escaped characters blanked (what stays is read as markup). */
function outsideCode(line: string): string {
  let out = "";
  for (let i = 0; i < line.length;) {
    const c = line[i]!;
    if (c === "\\" && /[!-/:-@[-`{-~]/.test(line[i + 1] ?? "")) {
      out += "  ";
      i += 2;
    } else if (c === "`") {
      const run = /^`+/.exec(line.slice(i))![0];
      // A code span ends at the next run of exactly as many backticks.
      const end = [...line.slice(i + run.length).matchAll(/`+/g)].find((m) => m[0].length === run.length);
      if (!end) {
        out += run;
        i += run.length;
      } else {
        const stop = i + run.length + end.index + run.length;
        out += " ".repeat(stop - i);
        i = stop;
      }
    } else {
      out += c;
      i++;
    }
  }
  return out.replace(/<code>[^<]*<\/code>/g, (m) => " ".repeat(m.length));
}

/** Unescaped `|` on a table line: GitHub splits cells there first, also inside a code span. */
const cellBreaks = (line: string) => line.replace(/\\[\s\S]/g, "  ").split("|").length - 1;

export function markupIn(md: string): string[] {
  const hits: string[] = [];
  let fence: string | null = null;
  let columns: number | null = null;
  for (const [index, line] of md.split("\n").entries()) {
    const at = `line ${index + 1}`;
    const opens = /^(`{3,})/.exec(line)?.[1];
    if (fence !== null) {
      if (opens && opens.length >= fence.length && line.trim() === opens) fence = null;
      continue;
    }
    if (opens) {
      fence = opens;
      continue;
    }
    if (/[\u202a-\u202e\u2066-\u2069]/.test(line)) hits.push(`${at}: a bidirectional override`);
    if (line.startsWith("|")) {
      columns ??= cellBreaks(line);
      if (cellBreaks(line) !== columns) hits.push(`${at}: ${cellBreaks(line)} cell breaks, not ${columns}`);
    } else columns = null;
    if (line === "<!-- plumb plan -->" || line === "<!-- plumb apply -->") continue;
    const text = outsideCode(line).replace(OUR_TAGS, "");
    for (const [pattern, what] of [
      [/</, "HTML"],
      [/!\[|\]\(/, "an image or a link"],
      [/https?:\/\/|www\./i, "a bare URL (a link)"],
      [/(?<!\w)@[A-Za-z0-9]/, "a mention"],
      [/(?<![\w&])#\d/, "a reference"],
      [/\*\*b\*\*/, "emphasis"],
      [/\$/, "math"],
    ] as const)
      if (pattern.test(text)) hits.push(`${at}: ${what}: ${line}`);
  }
  return hits;
}
