import { shortDigest } from "../manifest/source/source-digest.js";
import {
  type FieldChange,
  type PlannedUpload,
  SOURCE_TARBALL_FIELD,
  type UploadFile,
  type UploadReason,
} from "./plan/plan-types.js";

// internal_source content: the live source_tarball_path is an opaque object path, so plumb compares
// the digest of spec.source_path with the digest it recorded after its last upload to that very
// path (status store). Pure.

/** The content of spec.source_path as read at plan time. */
export type DesiredSource = {
  source_path: string;
  digest: string;
  /** The files the digest covers (what the upload holds). */
  files?: UploadFile[];
  /** Real paths of `valueFrom.file` secrets left out of it: apply packs with the same exclusions. */
  secret_files?: readonly string[];
};

/** What the status store says plumb last uploaded to a deployment. */
export type RecordedSource = { digest: string; object_path: string };

/** The upload a deployment needs, or null when the live tarball is the desired content. */
export function planUpload(
  desired: DesiredSource,
  liveTarballPath: string | null | undefined,
  recorded: RecordedSource | undefined,
): PlannedUpload | null {
  const upload = (reason: UploadReason): PlannedUpload => ({
    source_path: desired.source_path,
    digest: desired.digest,
    previous_digest: recorded?.digest ?? null,
    reason,
    ...(desired.files ? { files: desired.files } : {}),
  });
  if (!liveTarballPath) return upload("not_uploaded");
  if (!recorded) return upload("unknown");
  if (recorded.object_path !== liveTarballPath) return upload("replaced");
  return recorded.digest === desired.digest ? null : upload("changed");
}

/** The field change shown for an upload: old/new are digests (null when not known). */
export function uploadField(upload: PlannedUpload): FieldChange {
  return { field: SOURCE_TARBALL_FIELD, class: "revision", old: upload.previous_digest, new: upload.digest };
}

/** "source ./app (content changed sha256:abc… → sha256:def…)" and the like. */
export function describeUpload(upload: PlannedUpload): string {
  const to = shortDigest(upload.digest);
  const why = {
    not_uploaded: `not uploaded yet, ${to}`,
    unknown: `live content unknown to plumb, will upload ${to}`,
    replaced: `live tarball replaced outside plumb, will upload ${to}`,
    // Stryker disable next-line StringLiteral: equivalent, "changed" is planned only over a recorded digest (planUpload)
    changed: `content changed ${shortDigest(upload.previous_digest ?? "")} → ${to}`,
  }[upload.reason];
  return `source ${upload.source_path} (${why})`;
}

const LARGEST_SHOWN = 3;

const bytes = (n: number): string =>
  n < 1024
    ? `${n} B`
    : n < 1024 * 1024
      ? `${(n / 1024).toFixed(1)} KiB`
      : `${(n / 1024 / 1024).toFixed(1)} MiB`;

/** File names come from a pull request: anything but plain characters is shown quoted and escaped. */
const shownPath = (path: string): string =>
  /^[\w./@+-]+$/.test(path) ? path : JSON.stringify(path).replace(/`/g, "\\u0060");

/** Larger files first; equal sizes in path order. */
function largestFirst(a: UploadFile, b: UploadFile): number {
  // Stryker disable next-line EqualityOperator: equivalent, two files never share a path
  return b.size - a.size || (a.path < b.path ? -1 : 1);
}

/** "upload holds 12 files, 40.2 KiB; largest: src/graph.ts (20.1 KiB), …"; null without a listing. */
export function describeUploadContents(upload: PlannedUpload): string | null {
  if (!upload.files) return null;
  const total = upload.files.reduce((sum, f) => sum + f.size, 0);
  const largest = [...upload.files]
    .sort(largestFirst)
    .slice(0, LARGEST_SHOWN)
    .map((f) => `${shownPath(f.path)} (${bytes(f.size)})`);
  const count = `${upload.files.length} file${upload.files.length === 1 ? "" : "s"}`;
  const label = upload.files.length > LARGEST_SHOWN ? "largest" : "files";
  return `upload holds ${count}, ${bytes(total)}; ${label}: ${largest.join(", ")}`;
}
