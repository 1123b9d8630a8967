import type { CST } from "yaml";
import { blockScalar } from "./cst-block-scalar.js";
import { endOf, flowScalar, type Read, unsure } from "./cst-scalar.js";
import { emptyAt, emptyNode, props } from "./cst-props.js";
import { MAX_NESTING } from "../yaml-shape.js";

// A composer of plumb's own over yaml's CST (docs/manifests.md "Speed"): yaml's Composer builds a
// Document of nodes, then toJS builds the values, then plumb walks the nodes again (yaml-shape.ts);
// this builds the values in one walk of the tokens the parser made. It reads the common subset
// (block and flow mappings and lists; plain, quoted and block scalars; comments; `---` documents)
// and is sure of it: it follows yaml's compose/*.ts step by step and gives up (`unsure()`, from
// cst-scalar.ts) wherever yaml would report an error or a warning, and on anything else: tags,
// anchors, aliases, directives, `?` and multi-line keys, merge keys, keys equal as text, nesting
// past MAX_NESTING, tabs in indentation. Such a file goes to yaml's composer, as every file did
// before: what it reports, and where, is yaml's. test/manifest/cst-compose.test.ts holds the two
// to the same results over every YAML file under test/ and examples/ and edited manifests (20,000
// with CST_CORPUS=20000).

/** One document as yaml's composer and toJS would give it, and the offset plumb shows it at. */
export type ComposedDocument = { value: unknown; start: number };

type Context = { atRoot: boolean };

function node(token: CST.Token, depth: number, ctx: Context): Read {
  switch (token.type) {
    case "scalar":
    case "single-quoted-scalar":
    case "double-quoted-scalar":
      return flowScalar(token);
    case "block-scalar":
      return blockScalar(token, ctx.atRoot);
    case "block-map":
    case "block-seq":
    case "flow-collection":
      if (depth > MAX_NESTING) unsure();
      ctx.atRoot = false;
      return token.type === "block-map"
        ? blockMap(token, depth, ctx)
        : token.type === "block-seq"
          ? blockSeq(token, depth, ctx)
          : flowCollection(token, depth, ctx);
    default:
      return unsure();
  }
}

/** A mapping key: a one-line flow scalar; its text, as toJS makes an object key of it. */
function key(token: CST.Token | null | undefined): { name: string; end: number } {
  if (
    token?.type !== "scalar" &&
    token?.type !== "single-quoted-scalar" &&
    token?.type !== "double-quoted-scalar"
  )
    return unsure();
  if (token.source.includes("\n") || token.end?.some((t) => t.type === "newline")) unsure();
  const { value, end } = flowScalar(token);
  const name = value === null ? "" : String(value);
  return { name, end };
}

/** Adds a pair as toJS does; a key equal as text to an earlier one, or "<<", is `unsure()`. */
function put(map: Record<string, unknown>, name: string, value: unknown): void {
  if (name === "<<" || Object.prototype.hasOwnProperty.call(map, name)) unsure();
  if (name === "__proto__" || name === "constructor")
    Object.defineProperty(map, name, { value, writable: true, enumerable: true, configurable: true });
  else map[name] = value;
}

/** yaml's resolveBlockMap: a mapping of `key: value` lines. */
function blockMap(map: CST.BlockMap, depth: number, ctx: Context): Read {
  const value: Record<string, unknown> = {};
  let offset = map.offset;
  let commentEnd: number | null = null;
  for (const item of map.items) {
    const keyProps = props(item.start, "explicit-key-ind", false, offset);
    if (keyProps.found || item.explicitKey) unsure();
    if (!item.sep) {
      // A line of comments only.
      if (item.key || item.value) unsure();
      commentEnd = keyProps.end;
      continue;
    }
    const { key: keyToken, sep, value: valueToken } = item;
    if (keyToken && "indent" in keyToken && keyToken.indent !== map.indent) unsure();
    const { name, end: keyEnd } = key(keyToken);
    const valueProps = props(sep, "map-value-ind", false, keyEnd);
    offset = valueProps.end;
    if (!valueProps.found) return unsure();
    if (valueToken?.type === "block-map" && !valueProps.hasNewline) unsure();
    // yaml (strict) refuses a key whose ":" is more than 1024 characters after the key's props.
    if (keyProps.end < valueProps.found.offset - 1024) unsure();
    const read = valueToken ? node(valueToken, depth + 1, ctx) : emptyNode(offset, sep, valueProps);
    offset = read.end;
    put(value, name, read.value);
  }
  if (commentEnd && commentEnd < offset) unsure();
  return { value, end: commentEnd ?? offset };
}

/** yaml's resolveBlockSeq: a list of `- item` lines. */
function blockSeq(seq: CST.BlockSequence, depth: number, ctx: Context): Read {
  const value: unknown[] = [];
  let offset = seq.offset;
  let commentEnd: number | null = null;
  for (const item of seq.items) {
    const p = props(item.start, "seq-item-ind", false, offset);
    if (!p.found) {
      if (item.value) unsure();
      commentEnd = p.end;
      continue;
    }
    const read = item.value ? node(item.value, depth + 1, ctx) : emptyNode(p.end, item.start, p);
    offset = read.end;
    value.push(read.value);
  }
  return { value, end: commentEnd ?? offset };
}

const isBlock = (token: CST.Token | null | undefined) =>
  token?.type === "block-map" || token?.type === "block-seq";

/** yaml's resolveFlowCollection: `{a: 1, b: 2}` or `[1, 2]`, pairs in a list (`[a: 1]`) left to yaml. */
function flowCollection(flow: CST.FlowCollection, depth: number, ctx: Context): Read {
  const isMap = flow.start.source === "{";
  const value: Record<string, unknown> | unknown[] = isMap ? {} : [];
  let offset = flow.offset + flow.start.source.length;
  flow.items.forEach((item, i) => {
    const p = props(item.start, "explicit-key-ind", true, offset);
    if (p.found) unsure();
    if (!item.sep && !item.value) {
      // Nothing but a comma (a trailing one) or comments: fine only after the last item.
      if (item.key || (i === 0 && p.comma) || i < flow.items.length - 1) unsure();
      offset = p.end;
      return;
    }
    if (p.comma !== i > 0) unsure();
    if (!isMap) {
      if (item.sep || item.key || isBlock(item.value)) unsure();
      const read = node(item.value!, depth + 1, ctx);
      (value as unknown[]).push(read.value);
      offset = read.end;
      return;
    }
    const { name, end: keyEnd } = key(item.key);
    const valueProps = props(item.sep ?? [], "map-value-ind", true, keyEnd);
    if (!valueProps.found || isBlock(item.value)) unsure();
    const read = item.value
      ? node(item.value, depth + 1, ctx)
      : emptyNode(valueProps.end, item.sep ?? [], valueProps);
    put(value as Record<string, unknown>, name, read.value);
    offset = read.end;
  });
  const [close, ...rest] = flow.end;
  if (close?.source !== (isMap ? "}" : "]")) unsure();
  const closed = close!.offset + close!.source.length;
  return { value, end: rest.length > 0 ? endOf(rest, closed, true) : closed };
}

/** Where plumb shows a document to start (locate.ts documentStart): its `kind` key, else its node. */
function startOf(token: CST.Token): number {
  if (token.type === "block-map" || (token.type === "flow-collection" && token.start.source === "{")) {
    for (const item of token.items) {
      if (item.sep && key(item.key).name === "kind") return item.key!.offset;
    }
  }
  return token.offset;
}

/** yaml's composeDoc for one document token. */
function document(doc: CST.Document): ComposedDocument {
  const p = props(doc.start, "doc-start", false, doc.offset);
  if (p.found && isBlock(doc.value) && !p.hasNewline) unsure();
  const ctx: Context = { atRoot: true };
  const read = doc.value ? node(doc.value, 1, ctx) : emptyNode(p.end, doc.start, p);
  endOf(doc.end, read.end, false);
  return { value: read.value, start: doc.value ? startOf(doc.value) : emptyAt(p.end, doc.start) };
}

/**
 * Every document of a parsed text, as yaml's Composer and toJS would give them, when this is sure
 * to: none has an error, a warning, or a problem yaml-shape.ts would find. Undefined otherwise,
 * and the text is composed by yaml.
 */
export function composeDocuments(tokens: readonly CST.Token[]): ComposedDocument[] | undefined {
  try {
    const documents: ComposedDocument[] = [];
    for (const token of tokens) {
      if (token.type === "document") documents.push(document(token));
      else if (token.type !== "comment" && token.type !== "newline" && token.type !== "space")
        return undefined;
    }
    return documents;
  } catch {
    // UNSURE, or anything this code did not foresee: yaml decides.
    return undefined;
  }
}
