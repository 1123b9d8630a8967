import { existsSync, realpathSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { PlumbError } from "../errors.js";
import { type ParsedDocument, type ParseResult } from "./parse/parse.js";
import { parseFiles, parseThreads } from "./parse/parse-pool.js";
import { OFF_THREAD, readAndParse, toRelative } from "./parse/read-file.js";
import type { LoadedEnvironment, LoadedManifest, Problem } from "./types.js";
import { type Compact, createValidation, validateDocuments } from "./validate.js";
import { environmentFilesAbove, environmentFilesFor } from "./environment-scan.js";
import { listManifestFiles } from "./list-tree.js";

export type LoadResult = {
  manifests: LoadedManifest[];
  /** The `kind: Environment` documents, when the tree has any (docs/environments.md). */
  environments?: LoadedEnvironment[];
  problems: Problem[];
  /**
   * One environment's view only: the files of Deployments that do not run there (their records
   * there are removed from git, not emptied files; src/environment/resolve.ts).
   */
  elsewhere?: string[];
};

/**
 * Loads and validates every *.yaml / *.yml under `root` (or the one file `root` names).
 * Problems are data; only a missing root throws. Paths in results are relative to the root.
 */
export type LoadOptions = {
  /** Files over this many bytes are refused unread (`manifest-too-large`); see maxManifestBytesFrom. */
  maxBytes?: number;
  /**
   * Parse a big tree on worker threads too, one per core (parse-pool.ts): for the commands, whose
   * process does nothing else meanwhile. Not the controller: each thread's isolate costs memory.
   */
  parallel?: boolean;
  /**
   * A directory whose tree defines no Environment while its manifests name environments runs with
   * the Environment documents found above it, as one file does (environmentFilesAbove): for the
   * commands. The controller reads its own root only.
   */
  environmentsAbove?: boolean;
  /**
   * An environment is asked for by name (--env, promote's --to): with environmentsAbove, those
   * above are read even when PATH's manifests name none (they run in every environment), as the
   * user said which one; without a name such a PATH is never pulled into environments above it.
   */
  environmentRequested?: boolean;
};

/** One command's loads of manifest trees, by root and size limit (loadManifestsOnce). */
export type ManifestLoads = Map<string, Promise<LoadResult>>;

/**
 * loadManifests, once per root and size limit within `loads` (one command: the environments of one
 * `plumb plan` read the same tree, and each parsed it again). Callers must not change the result.
 * `loads` belong to a command's process, which does nothing else meanwhile: a big tree is parsed on
 * every core (`parallel`), whichever caller comes first.
 */
export function loadManifestsOnce(
  loads: ManifestLoads | undefined,
  root: string,
  options: LoadOptions = {},
): Promise<LoadResult> {
  if (!loads) return loadManifests(root, options);
  const keyOf = (requested: boolean) =>
    `${options.maxBytes ?? ""}\0${options.environmentsAbove === true}\0${requested}\0${root}`;
  const requested = options.environmentRequested === true;
  const key = keyOf(requested);
  let loaded = loads.get(key);
  if (loaded) return loaded;
  const load = () => loadManifests(root, { ...options, parallel: true });
  // A load that found Environments is the same with a name asked for (each environment's plan asks
  // for its own after a run without --env loaded the tree): reused instead of parsed again.
  const unasked = requested ? loads.get(keyOf(false)) : undefined;
  loaded = unasked ? unasked.then((tree) => (tree.environments?.length ? tree : load())) : load();
  loads.set(key, loaded);
  return loaded;
}

export async function loadManifests(root: string, options: LoadOptions = {}): Promise<LoadResult> {
  // A big tree's workers start after its first chunk is parsed here, and only when that chunk was
  // not plain manifests (parseFiles): a tree of those is parsed on this thread alone.
  const { files, base, realBase, problems, maxBytes } = await listManifestFiles(root, options);
  const threads = options.parallel ? parseThreads(files.length) : 1;
  if (files.length === 1 && files[0]!.path === resolve(root)) {
    // One file as PATH: its Environment documents come from other files, validated with it.
    const [result] = await parseFiles(files, { base, realBase, maxBytes }, 1);
    problems.push(...result!.problems);
    const requested = options.environmentsAbove === true && options.environmentRequested === true;
    const found = await environmentFilesFor(files[0]!.path, { maxBytes, requested });
    const outside = environmentDocuments(found.files, base, maxBytes);
    problems.push(...found.problems, ...outside.problems);
    return validateDocuments([...result!.documents, ...outside.documents], problems);
  }
  // Files come in reading order (listManifestFiles): each run of them is validated as soon as it
  // is parsed, while other threads parse the rest, instead of every document at the end.
  const validation = createValidation(problems);
  await parseFiles(files, { base, realBase, maxBytes }, threads, {
    inOrder: (results) => results.forEach((result) => validation.addFile(result)),
  });
  if (options.environmentsAbove && validation.lacksEnvironments(options.environmentRequested === true)) {
    const found = await environmentFilesAbove(base, { maxBytes });
    const outside = environmentDocuments(found.files, base, maxBytes);
    validation.addFile({ documents: outside.documents, problems: [...found.problems, ...outside.problems] });
  }
  return validation.finish();
}

/**
 * The Environment documents of files outside PATH that it runs with (environment-scan.ts): only
 * their `kind: Environment` documents, shown relative to PATH (or to the one file's directory).
 */
function environmentDocuments(paths: readonly string[], base: string, maxBytes: number): ParseResult {
  const documents: ParsedDocument[] = [];
  const problems: Problem[] = [];
  for (const path of paths) {
    const real = realpathSync(path);
    const result = readAndParse({ path, real }, base, dirname(real), maxBytes) as ParseResult;
    documents.push(...result.documents.filter((d) => d.value.kind === "Environment"));
    problems.push(...result.problems);
  }
  return { documents, problems };
}

/**
 * The names of the Environments a PATH would run with given --env (environmentRequested), for a
 * hint when it runs without: none when its tree defines none and there are none above, or it
 * cannot be read. A directory not made yet (import's --out) has those above it.
 */
export async function environmentNamesAbove(path: string, maxBytes: number): Promise<string[]> {
  if (!existsSync(path)) {
    const found = await environmentFilesAbove(path, { maxBytes });
    const { documents } = environmentDocuments(found.files, dirname(resolve(path)), maxBytes);
    return documents.flatMap((d) => {
      const name = (d.value.metadata as { name?: unknown } | undefined)?.name;
      return typeof name === "string" ? [name] : [];
    });
  }
  const options = { maxBytes, environmentsAbove: true, environmentRequested: true };
  const tree = await loadManifests(path, options).catch(() => undefined);
  return tree?.environments?.map((e) => e.manifest.metadata.name) ?? [];
}

/**
 * loadManifests in slices of about `sliceMs` of work, yielding to the event loop between them, so
 * a caller's timers and sockets (the controller's probes and reconciles) keep running: the
 * controller loads this way instead of on a worker thread, whose isolate cost 25-50 MB all day.
 * A file over `maxFileBytes` (a hostile one takes up to a second to refuse, in one piece) makes it
 * stop and answer `{ offThread: file }`: the caller loads that tree on a worker instead.
 * `compact`: each manifest that passed, as soon as it did, turned into the form the caller keeps
 * (the controller's snapshot: compact-manifest.ts); the result holds those instead.
 */
export async function loadManifestsInSlices(
  root: string,
  options: LoadOptions & { maxFileBytes: number; sliceMs: number; compact?: Compact },
): Promise<LoadResult | { offThread: string }> {
  const { files, base, realBase, problems, maxBytes } = await listManifestFiles(root, options);
  let sliceStart = performance.now();
  const pause = async () => {
    if (performance.now() - sliceStart < options.sliceMs) return;
    await new Promise((resolveSlice) => setImmediate(resolveSlice));
    sliceStart = performance.now();
  };
  // Files come in reading order (listManifestFiles), so each is validated as it is parsed and its
  // parsed documents can go: a tree's parsed documents held until the last one was validated were
  // the peak of the controller's restart (docs/controller.md, "Speed and memory").
  const validation = createValidation(problems, options.compact);
  for (const file of files) {
    const result = readAndParse(file, base, realBase, maxBytes, options.maxFileBytes);
    if (result === OFF_THREAD) return { offThread: toRelative(base, file.path) };
    validation.addFile(result);
    await pause();
  }
  return validation.finish();
}

/** PATH holds no plumb manifest (apiVersion: plumb/v1) at all. */
export const noManifests = (path: string) =>
  new PlumbError(
    "no-manifests",
    `no plumb manifests (apiVersion: plumb/v1) under ${path}; check PATH (files must end in .yaml or .yml)`,
  );
