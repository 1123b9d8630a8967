import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseWithPositions } from "../manifest/parse.js";
import type { LoadedManifest, SourceLocation } from "../manifest/types.js";

// The snapshot holds every manifest for as long as the controller runs. A loaded manifest keeps its
// file's text and, once a position is asked for (every plan asks for the document's line), the
// whole positional YAML tree of its file: with 10,000 manifests that alone was ~90 MB of heap. Here
// an object keeps its value, its file and, after the first plan, its start position; the rare
// position of a field (an error message) is read again from the file.

const fileStart = (file: string): SourceLocation => ({ file, line: 1, column: 1 });

/** Positions of the document that still defines `manifest` in `root/file`; undefined when gone. */
export function locatorsOnDisk(root: string, loaded: Pick<LoadedManifest, "file" | "manifest">) {
  let text: string;
  try {
    text = readFileSync(join(root, loaded.file), "utf8");
  } catch {
    return undefined;
  }
  const { kind, metadata } = loaded.manifest;
  const doc = parseWithPositions(text, loaded.file, true).documents.find(
    (d) =>
      d.value.kind === kind && (d.value.metadata as { name?: unknown } | undefined)?.name === metadata.name,
  );
  return doc?.locators;
}

export function compactLoaded<M extends LoadedManifest>(loaded: M, root: string): M {
  const { manifest, file } = loaded;
  let original: LoadedManifest | undefined = loaded; // until the first position is asked for
  let start: SourceLocation | undefined;
  const release = () => {
    if (!original) return;
    start = original.location;
    original = undefined;
  };
  return {
    manifest,
    file,
    get location() {
      release();
      return start!;
    },
    locate(path) {
      if (original) {
        const at = original.locate(path);
        release();
        return at;
      }
      return locatorsOnDisk(root, { file, manifest })?.key(path) ?? start ?? fileStart(file);
    },
  } as M;
}
