import { readFile } from "node:fs/promises";
import { replaceFilesText } from "../manifest/write/replace-file.js";
import { join } from "node:path";
import { createTwoFilesPatch } from "diff";
import { Alias, type Node, Scalar, visit, YAMLMap, YAMLSeq } from "yaml";
import { readYamlDocuments } from "../manifest/parse/yaml-text.js";
import { fileError, PlumbError } from "../errors.js";
import type { PromotionItem } from "./decide.js";
import { setValues } from "../environment/set-values.js";

// The promotion as changes of manifest files: each file read once, every promoted deployment's
// edits applied in place (environment/set-values.ts), shown as a unified diff and written only when asked.

export type FileChange = { file: string; before: string; after: string };

/** The new text of every file a promotion edits (relative to `root`); an edit that cannot be made throws. */
export async function buildFileChanges(root: string, items: readonly PromotionItem[]): Promise<FileChange[]> {
  const byFile = new Map<string, PromotionItem[]>();
  for (const item of items)
    if (item.edits.length > 0) byFile.set(item.file, [...(byFile.get(item.file) ?? []), item]);
  const changes: FileChange[] = [];
  for (const [file, fileItems] of byFile) {
    const path = join(root, file);
    const before = await readFile(path, "utf8").catch((error: unknown) => {
      throw fileError("manifest-unreadable", path, error, "promote edits the manifest files under PATH");
    });
    const { text, outcomes } = setValues(
      before,
      fileItems.flatMap((i) => i.edits),
      file,
    );
    const failed = outcomes.filter((o) => !o.written);
    if (failed.length > 0)
      throw new PlumbError(
        "promotion-edit-failed",
        `${file}: ${failed.map((o) => `${o.edit.name} ${o.edit.path.join(".")}: ${o.reason ?? "not written"}`).join("; ")}; nothing was written`,
      );
    changes.push({ file, before, after: text });
  }
  return changes;
}

/**
 * Writes the changed files under `root`, all or none as far as the disk allows, and only over the
 * text each edit was computed from (replaceFilesText): a file saved meanwhile refuses the whole
 * write (manifest-changed). Written one after the other, a failing file left the ones before it
 * promoted, and an edit saved between the read and the write was lost.
 */
export async function writeFileChanges(root: string, changes: readonly FileChange[]): Promise<void> {
  await replaceFilesText(
    changes.map((c) => ({ path: join(root, c.file), before: c.before, after: c.after })),
    "promote --write",
  );
}

/** What a secret's literal value is shown as in the diff, as plan, diff and render show it. */
const SENSITIVE = "(sensitive)";

/**
 * Where each `secrets: [{value: …}]` entry's literal value is in `text`, as [start, end) offsets
 * (an alias's anchored node too: `value: *pw` shows `&pw hunter2` wherever it is written).
 */
function secretValueRanges(text: string, file: string): Array<[number, number]> {
  // By start: two aliases of one anchor name the same node once.
  const ranges = new Map<number, number>();
  const add = (node: Node | null | undefined) => {
    if (node?.range) ranges.set(node.range[0], node.range[1]);
  };
  for (const doc of readYamlDocuments(text, file)) {
    visit(doc, {
      Pair(_, pair) {
        const { key, value: list } = pair;
        if (!(key instanceof Scalar) || key.value !== "secrets" || !(list instanceof YAMLSeq)) return;
        for (const item of list) {
          if (!(item instanceof YAMLMap)) continue;
          const value = item.get("value");
          if (value instanceof Alias) add(value.resolve(doc));
          add(value);
        }
      },
    });
  }
  return [...ranges];
}

/**
 * The text with each secret's literal value replaced by "(sensitive)", its line breaks kept (the
 * diff's line numbers stay the file's). A promotion never edits a secret, so both sides mask alike;
 * the diff is printed where CI logs keep it, which more people read than the repository.
 */
function maskSecretValues(text: string, file: string): string {
  let masked = text;
  for (const [start, end] of secretValueRanges(text, file).sort((a, b) => b[0] - a[0])) {
    const lines = masked.slice(start, end).split("\n");
    const kept = lines.map((line, i) => (i === 0 ? SENSITIVE : line.endsWith("\r") ? "\r" : ""));
    masked = masked.slice(0, start) + kept.join("\n") + masked.slice(end);
  }
  return masked;
}

/** The changes as one unified diff (a/FILE, b/FILE), secrets' literal values masked. */
export function formatFileChanges(changes: readonly FileChange[]): string {
  return changes
    .map((c) =>
      createTwoFilesPatch(
        `a/${c.file}`,
        `b/${c.file}`,
        maskSecretValues(c.before, c.file),
        maskSecretValues(c.after, c.file),
        undefined,
        undefined,
        {
          context: 3,
        },
      )
        .split("\n")
        .filter((line) => !line.startsWith("====="))
        .join("\n"),
    )
    .join("");
}
