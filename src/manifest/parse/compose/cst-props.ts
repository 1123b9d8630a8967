import type { CST } from "yaml";
import { type Read, unsure } from "./cst-scalar.js";

// What surrounds a node in yaml's CST (its props: spaces, comments, line breaks, the indicator
// before it) and where an empty value is, as yaml's compose/*.ts read them, for cst-compose.ts.

type Props = {
  found: CST.SourceToken | null;
  comma: boolean;
  hasNewline: boolean;
  comment: boolean;
  end: number;
};

/** yaml's resolveProps for tokens without anchors or tags; what it would report is `unsure()`. */
export function props(
  tokens: readonly CST.SourceToken[],
  indicator: string,
  flow: boolean,
  offset: number,
): Props {
  // A key's or item's props start on a new line; a value's, after its ":".
  let hasSpace = indicator !== "map-value-ind" && !flow;
  let found: CST.SourceToken | null = null;
  let comma = false;
  let hasNewline = false;
  let comment = false;
  for (const token of tokens) {
    switch (token.type) {
      case "space":
        // yaml's tab rules depend on what follows; a tab is rare enough to leave them to it.
        if (!flow && token.source.includes("\t")) unsure();
        hasSpace = true;
        break;
      case "comment":
        if (!hasSpace) unsure();
        comment = true;
        break;
      case "newline":
        hasNewline = true;
        hasSpace = true;
        break;
      case "comma":
        if (!flow || comma) unsure();
        comma = true;
        hasSpace = false;
        break;
      default:
        if (token.type !== indicator || found) unsure();
        found = token;
        hasSpace = false;
    }
  }
  const last = tokens[tokens.length - 1];
  return { found, comma, hasNewline, comment, end: last ? last.offset + last.source.length : offset };
}

/** yaml's emptyScalarPosition: where an empty value is, back before the blanks and comments at its end. */
export function emptyAt(offset: number, before: readonly CST.SourceToken[]): number {
  for (let i = before.length - 1; i >= 0; --i) {
    const token = before[i]!;
    if (token.type === "space" || token.type === "comment" || token.type === "newline") {
      offset -= token.source.length;
      continue;
    }
    for (let next = before[++i]; next?.type === "space"; next = before[++i]) offset += next.source.length;
    break;
  }
  return offset;
}

/** An empty value (null): where its node ends (a comment after it belongs to it). */
export const emptyNode = (offset: number, before: readonly CST.SourceToken[], p: Props): Read => ({
  value: null,
  end: p.comment ? p.end : emptyAt(offset, before),
});
