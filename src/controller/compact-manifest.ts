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

/**
 * One object of the snapshot. A class, not an object of closures: 10,000 of them shared three
 * closures and a context each (~2.7 MB). The value is copied so that its strings stop being
 * slices of the file's text, which they would otherwise keep alive (~2 MB at 10,000 files).
 */
class CompactManifest implements LoadedManifest {
  readonly manifest: LoadedManifest["manifest"];
  readonly file: string;
  #root: string;
  #original: LoadedManifest | undefined; // until the first position is asked for
  #start: SourceLocation | undefined;

  constructor(loaded: LoadedManifest, root: string) {
    this.manifest = structuredClone(loaded.manifest);
    this.file = loaded.file;
    this.#root = root;
    this.#original = loaded;
  }

  #release(): void {
    if (!this.#original) return;
    this.#start = this.#original.location;
    this.#original = undefined;
  }

  get location(): SourceLocation {
    this.#release();
    return this.#start!;
  }

  locate(path: readonly (string | number)[]): SourceLocation {
    if (this.#original) {
      const at = this.#original.locate(path);
      this.#release();
      return at;
    }
    return (
      locatorsOnDisk(this.#root, this)?.key(path) ?? this.#start ?? fileStart(this.file)
    );
  }
}

export function compactLoaded(loaded: LoadedManifest, root: string): LoadedManifest {
  return new CompactManifest(loaded, root);
}
