import { describe, expect, it } from "vitest";
import { formatEnvironmentsMarkdown } from "../../src/report/markdown/environments-markdown.js";

// The bound of a Markdown document over several environments (the e2e test runs it through plan):
// how the limit is shared, where a document is cut, and what happens when even the notes are too many.

/** A document of `n` sections of about 500 characters, each a <details> holding a code block. */
const doc = (n: number, tag = "x") =>
  Array.from(
    { length: n },
    (_, i) =>
      `\n<details><summary>${tag} ${i}</summary>\n\n\`\`\`diff\n+ ${"v".repeat(440)}\n\n+ after a blank line\n\`\`\`\n\n</details>\n`,
  ).join("");

const balanced = (text: string) =>
  (text.match(/^```/gm)?.length ?? 0) % 2 === 0 &&
  text.match(/<details>/g)?.length === text.match(/<\/details>/g)?.length;

describe("formatEnvironmentsMarkdown", () => {
  it("keeps every document whole when the whole fits", () => {
    const parts = [
      { name: "a", text: doc(3) },
      { name: "b", text: doc(2) },
    ];
    expect(formatEnvironmentsMarkdown(parts, 10_000)).toBe(
      `## Environment a\n\n${doc(3)}## Environment b\n\n${doc(2)}`,
    );
  });

  it("keeps a short document whole and cuts the long ones to even shares, between sections", () => {
    const out = formatEnvironmentsMarkdown(
      [
        { name: "small", text: doc(2, "s") },
        { name: "big", text: doc(100, "b") },
        { name: "huge", text: doc(200, "h") },
      ],
      20_000,
    );
    expect(out.length).toBeLessThanOrEqual(20_000);
    expect(out).toContain(`## Environment small\n\n${doc(2, "s")}## Environment big`);
    const big = out.slice(out.indexOf("## Environment big"), out.indexOf("## Environment huge"));
    const huge = out.slice(out.indexOf("## Environment huge"));
    for (const [name, part] of [
      ["big", big],
      ["huge", huge],
    ] as const) {
      expect(part).toMatch(
        new RegExp(`> \\*\\*Truncated:\\*\\* \\d+ more characters of environment ${name}'s output`),
      );
      expect(balanced(part)).toBe(true);
    }
    expect(Math.abs(big.length - huge.length)).toBeLessThan(600); // one section
  });

  it("leaves out the last environments, named, when even their notes do not fit", () => {
    const parts = Array.from({ length: 40 }, (_, i) => ({ name: `env${i}`, text: doc(20) }));
    const out = formatEnvironmentsMarkdown(parts, 6_000);
    expect(out.length).toBeLessThanOrEqual(6_000);
    expect(out).toContain("## Environment env0\n");
    expect(out).toMatch(/> \*\*Truncated:\*\* environments (env\d+, )*env39 not shown/);
    expect(balanced(out)).toBe(true);
  });
});
