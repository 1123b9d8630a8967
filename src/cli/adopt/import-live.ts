import { escapeControls } from "../../errors.js";
import { buildDeploymentManifest, nestsTooDeep } from "../../import/build-manifest.js";
import { MAX_NESTING } from "../../manifest/parse/yaml-shape.js";
import { DEPLOYMENT_NAME_PATTERN } from "../../schema/constants.js";
import type { Deployment } from "../../schema/deployment.js";
import type { ApplyIo } from "../sync/apply.js";

// `plumb import`: which live deployments can become manifests; each left out is said on stdout.

/**
 * A live name becomes a file name, NAME.yaml in --out: one that is not a manifest's name (a path
 * separator, `..`, a space, a control character) is skipped, never written where it points.
 */
const MANIFEST_NAME = new RegExp(DEPLOYMENT_NAME_PATTERN);

/** How much of a server's text is printed: a name or an id is far shorter. */
const SHOWN_MAX = 120;

/**
 * A server's text quoted, every control character escaped (C1 too: JSON.stringify keeps them), and
 * so are the characters that reorder or break a terminal's line (bidi controls, U+2028/9); cut at
 * SHOWN_MAX characters, saying how many more there were. A hostile platform's 1 MB display_name
 * was printed whole, in every line naming it.
 */
export function shown(text: string): string {
  const cut = text.length > SHOWN_MAX ? text.slice(0, SHOWN_MAX).replace(/[\uD800-\uDBFF]$/, "") : text;
  const quoted = escapeControls(JSON.stringify(cut)); // bidi controls and U+2028/9 too
  return cut === text ? quoted : `${quoted}… (${text.length - cut.length} more characters)`;
}

/** The live deployments whose names can be manifests'; each other one is said on stdout. */
export function importable<T extends { id: string; name: string }>(
  live: T[],
  stdout: ApplyIo["stdout"],
): T[] {
  for (const d of live.filter((d) => !MANIFEST_NAME.test(d.name)))
    stdout.write(
      `skipped deployment ${shown(d.name)} (${shown(d.id)}): not a manifest name (a letter first, then letters, digits and '-', at most 63 characters); nothing is written for it\n`,
    );
  return live.filter((d) => MANIFEST_NAME.test(d.name));
}

/**
 * Each deployment's manifest. One being deleted is said on stdout and skipped: its manifest would
 * have made the next apply create again what someone had just deleted. So is one that would nest
 * deeper than a manifest may (a server's free-form field, e.g. a volume's configMap). Written, that
 * overflowed the YAML writer's stack (an internal error, nothing written), and at 65 levels it
 * was written and then refused by validation (too-deep), the whole repository with it.
 */
export function buildable(live: Deployment[], stdout: ApplyIo["stdout"]) {
  for (const d of live.filter((d) => d.status === "AWAITING_DELETE"))
    stdout.write(
      `skipped deployment ${d.name} (${shown(d.id)}): it is being deleted (AWAITING_DELETE); nothing is written for it\n`,
    );
  const built = live
    .filter((d) => d.status !== "AWAITING_DELETE")
    .map((d) => ({ liveName: d.name, id: d.id, built: buildDeploymentManifest(d) }));
  for (const b of built.filter((b) => nestsTooDeep(b.built.manifest)))
    stdout.write(
      `skipped deployment ${b.liveName} (${shown(b.id)}): its live fields nest more than ${MAX_NESTING} levels deep, which a manifest cannot hold; nothing is written for it\n`,
    );
  return built.filter((b) => !nestsTooDeep(b.built.manifest));
}
