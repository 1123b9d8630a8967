import type { EnvironmentManifest } from "../schema/environment.js";
import type { Manifest } from "../schema/manifest.js";

/** A position in a manifest file; line and column are 1-based. */
export type SourceLocation = { file: string; line: number; column: number };

export type Severity = "error" | "warning";

/** One finding of validation, pointing at the offending key or value. */
export type Problem = SourceLocation & {
  severity: Severity;
  /** Stable machine-readable code, e.g. "unknown-field", "cpu-out-of-range". */
  code: string;
  /** Dotted path of the field, e.g. "spec.source_config.build_on_push" ("" for the document). */
  field: string;
  message: string;
};

/** A plumb document read from disk, with what is needed to point back into its source. */
export type LoadedManifest<M extends Manifest = Manifest> = Located & { manifest: M };

/** A `kind: Environment` document read from disk (docs/environments.md). */
export type LoadedEnvironment = Located & { manifest: EnvironmentManifest };

type Located = {
  /** Path relative to the manifest root, as shown to users. */
  file: string;
  /** Location of the document start (the `kind` key when present). */
  location: SourceLocation;
  /** Location of a field, e.g. ["spec", "source_config", "build_on_push"]; the nearest existing ancestor when absent. */
  locate(path: readonly (string | number)[]): SourceLocation;
  /** Location of a field's value (locate points at its key); environments resolve through it. */
  locateValue?(path: readonly (string | number)[]): SourceLocation;
};
