import type { Manifest } from "../../schema/manifest.js";
import type { ParsedDocument } from "../parse/parse.js";
import type { LoadedManifest } from "../types.js";

// A document that passed, as what the caller keeps (validate.ts): its manifest, file and positions,
// and where its name is.

export function toLoaded(doc: ParsedDocument): LoadedManifest {
  return {
    // The schema check passed, so the value has the manifest's shape.
    manifest: doc.value as unknown as Manifest,
    file: doc.file,
    // A getter: positions are computed only when asked for (see parseManifestText).
    get location() {
      return doc.locators.start;
    },
    locate: doc.locators.key,
    locateValue: doc.locators.value,
  };
}

// Closures of their own, so that one kept for a compacted manifest does not keep its parsed document.
const NAME_PATH = ["metadata", "name"];
export const nameInLoaded = (loaded: LoadedManifest) => () =>
  loaded.locateValue ? loaded.locateValue(NAME_PATH) : loaded.locate(NAME_PATH);
export const nameInDocument = (doc: ParsedDocument) => () => doc.locators.value(NAME_PATH);
