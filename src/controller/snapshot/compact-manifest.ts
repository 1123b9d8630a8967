import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseWithPositions } from "../../manifest/parse/parse.js";
import type { LoadedManifest, SourceLocation } from "../../manifest/types.js";

// The snapshot holds every manifest for as long as the controller runs. A loaded manifest keeps its
// file's text and the whole positional YAML tree of its file: with 10,000 manifests that alone was
// ~90 MB of heap, and it was held until each object's first plan (during the first sweep, most of
// them). Here an object keeps its value, its file and its start position (every plan line shows
// it) from the start; the rare position of a field (an error message) is read again from the file.

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
  readonly location: SourceLocation;
  #root: string;

  constructor(loaded: LoadedManifest, root: string) {
    this.manifest = structuredClone(loaded.manifest);
    this.file = loaded.file;
    this.location = loaded.location;
    this.#root = root;
  }

  locate(path: readonly (string | number)[]): SourceLocation {
    return locatorsOnDisk(this.#root, this)?.key(path) ?? this.location;
  }

  locateValue(path: readonly (string | number)[]): SourceLocation {
    return locatorsOnDisk(this.#root, this)?.value(path) ?? this.location;
  }
}

/** `loaded` as the snapshot keeps it; one compacted already (the loader does it as it reads) as is. */
export function compactLoaded(loaded: LoadedManifest, root: string): LoadedManifest {
  return loaded instanceof CompactManifest ? loaded : new CompactManifest(loaded, root);
}
