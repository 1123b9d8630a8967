// @ts-check
// The allowed import directions between the folders of src/: each folder lists the folders (and
// top-level files) it may import. Anything not listed is refused by eslint (no-restricted-imports,
// see eslint.config.js), and test/architecture/layers.test.ts checks the real import graph
// against this table and for cycles. Add an entry here before adding an import that needs it.

/** What the controller may use; the CLI may use that, the controller and the rest. */
const CONTROLLER = [
  ...[
    "schema",
    "manifest",
    "environment",
    "diff",
    "api",
    "status",
    "git",
    "lock",
    "apply",
    "reconcile",
    "report",
  ],
  "status-page",
  "promote",
  ...["clock", "errors", "logger", "path-inside"],
];

/** @type {Record<string, string[]>} */
export const layers = {
  // The bottom: TypeBox shapes of the API and the manifests.
  schema: [],
  // The local control plane stands in for a foreign service: it shares only shapes, time and errors.
  "control-plane": ["schema", "clock", "errors", "json-depth"],
  // Load, parse and validate manifests (pure rules; file reads at its edge).
  manifest: ["schema", "errors", "path-inside", "regular-file", "url-tokens", "git-root", "process-running"],
  // Pure: one environment's view of the manifests (defaults and overrides merged, docs/environments.md).
  environment: ["schema", "manifest", "errors"],
  // Pure: normalise, classify, build bodies and plans.
  diff: ["schema", "manifest", "errors"],
  // HTTP clients: auth, rate limits, retries.
  api: ["schema", "clock", "errors", "logger", "regular-file", "json-depth"],
  // The status records on disk and on the git status branch.
  status: ["schema", "diff", "errors", "clock", "regular-file", "path-inside", "git-root", "process-running"],
  // Every git call: the status branch and its fenced push, credentials, the controller's remote source.
  git: [
    "schema",
    "diff",
    "status",
    "clock",
    "errors",
    "path-inside",
    "url-tokens",
    "git-root",
    "process-running",
  ],
  // The state lock: a local lock file or a lease on the status branch.
  lock: ["status", "git", "clock", "errors"],
  // The apply engine: send, wait, verify, upload, record.
  apply: ["schema", "manifest", "diff", "api", "status", "clock", "errors", "logger"],
  // Sessions that compose plan, apply and status for the commands and the controller.
  reconcile: [
    "schema",
    "manifest",
    "environment",
    "diff",
    "api",
    "status",
    "git",
    "lock",
    "apply",
    "clock",
    "errors",
    "logger",
  ],
  // Import live deployments as manifests.
  import: ["schema", "manifest", "diff", "errors", "url-tokens"],
  // Output: plan, apply, drift and status reports (text, JSON, Markdown).
  report: ["schema", "manifest", "environment", "diff", "status", "apply", "reconcile", "import", "errors"],
  // The controller's web page: its view models (pure), HTML shell and browser script.
  "status-page": ["status", "report"],
  // plumb promote: an environment's verified versions written into another's overrides in git.
  promote: ["schema", "manifest", "environment", "diff", "api", "status", "git", "reconcile", "errors"],
  // The long-lived controller.
  controller: CONTROLLER,
  // One file per command: parse flags, call the layers below, map errors to exit codes.
  cli: [...CONTROLLER, "import", "controller", "control-plane"],
  // Top-level files of src/.
  clock: [],
  errors: [],
  logger: [],
  // Bounded, non-blocking reads of small files anyone may have written (settings, state files).
  "regular-file": ["errors"],
  // "Is this path outside that directory", asked by several layers.
  "path-inside": [],
  // How deep a JSON text nests, before it is parsed: the control plane's requests, the clients' answers.
  "json-depth": [],
  // Credentials a URL carries besides user:password (a token in its query or path), for git's
  // redaction of remotes and the manifest rules that refuse such a URL.
  "url-tokens": [],
  // Where git would find a directory's repository (the nearest `.git` up), without starting git.
  "git-root": [],
  // Whether a process of this host runs (a leftover's maker gone), for the temp-file cleanups.
  "process-running": [],
};

/** The layer of a path relative to src/ ("apply/apply.ts" → "apply", "clock.ts" → "clock"). */
export const layerOf = (/** @type {string} */ relative) => {
  const [first = ""] = relative.split("/");
  return first.replace(/\.ts$/, "");
};

/** True for the layers that are one file at the top of src/ (clock.ts, errors.ts, logger.ts, regular-file.ts, path-inside.ts, json-depth.ts, url-tokens.ts, git-root.ts, process-running.ts). */
export const isTopLevelFile = (/** @type {string} */ layer) =>
  [
    "clock",
    "errors",
    "logger",
    "regular-file",
    "path-inside",
    "json-depth",
    "url-tokens",
    "git-root",
    "process-running",
  ].includes(layer);

/** eslint no-restricted-imports patterns for the files of one layer. */
export function restrictedImportsOf(/** @type {string} */ layer) {
  const allowed = new Set([layer, ...(layers[layer] ?? [])]);
  const refused = Object.keys(layers).filter((other) => !allowed.has(other));
  if (refused.length === 0) return [];
  const names = refused.join("|");
  return [
    {
      // Relative specifiers that reach src/ and enter a refused folder or top-level file.
      regex: `^${isTopLevelFile(layer) ? "\\./" : "(\\.\\./)+"}(${names})(/|\\.js$)`,
      message: `src/${layer} ${allowed.size > 1 ? `may import only ${[...allowed].filter((name) => name !== layer).join(", ")}` : "may import nothing of src/"} (layers.js).`,
    },
  ];
}
