import { readFile, stat } from "node:fs/promises";
import { relative, resolve, sep } from "node:path";
import { PlumbError } from "../errors.js";
import type { DeploymentManifest } from "../schema/manifest.js";
import { resolveInsideRoot } from "./inside-root.js";
import { MAX_MANIFEST_BYTES } from "./parse/parse.js";
import { PLUMB_CREDENTIAL_VARIABLES, plumbCredentialMessage } from "./rules/secret-rules.js";
import type { LoadedManifest } from "./types.js";

export type SecretValue = { name: string; value: string };

/**
 * Resolves the secrets of one deployment: `value`, `valueFrom.env` or `valueFrom.file` (relative
 * to the manifest's directory, and inside `root` even through symlinks). A trailing newline of a
 * file is dropped. Errors name the file, line and secret, never a value.
 */
export async function loadSecretValues(
  loaded: LoadedManifest<DeploymentManifest>,
  options: { root: string; env?: NodeJS.ProcessEnv },
): Promise<SecretValue[]> {
  const env = options.env ?? process.env;
  const root = resolve(options.root);
  const secrets = loaded.manifest.spec.secrets ?? [];
  return Promise.all(
    secrets.map(async (secret, i) => {
      const fail = (why: string): never => {
        const at = loaded.locate(["spec", "secrets", i, "name"]);
        throw new PlumbError(
          "secret-unresolved",
          `${at.file}:${at.line}:${at.column}: secret ${secret.name}: ${why}`,
        );
      };
      let value: string | undefined;
      if (secret.valueFrom && "env" in secret.valueFrom) {
        // Also where the value is read, whatever checked the manifest before (validate's secret-env-credential).
        if (PLUMB_CREDENTIAL_VARIABLES.has(secret.valueFrom.env))
          fail(plumbCredentialMessage(secret.valueFrom.env));
        value = env[secret.valueFrom.env];
        if (value === undefined || value === "")
          fail(`environment variable ${secret.valueFrom.env} is not set or empty`);
      } else if (secret.valueFrom && "file" in secret.valueFrom) {
        value = await readSecretFile(root, loaded.file, secret.valueFrom.file, fail);
      } else {
        value = secret.value;
      }
      if (value === undefined || value === "") return fail("no value (set value or valueFrom)");
      return { name: secret.name, value };
    }),
  );
}

async function readSecretFile(
  root: string,
  manifestFile: string,
  target: string,
  fail: (why: string) => never,
): Promise<string> {
  const { real, realRoot, shown } = await resolveInsideRoot(root, manifestFile, target, (why) =>
    fail(`file ${why}`),
  );
  // Also through a symlink: repository metadata is never a secret's value (it holds CI tokens).
  if (relative(realRoot, real).split(sep).includes(".git"))
    fail(`file ${shown} is inside a .git directory; keep the secret in a file of its own`);
  const info = await stat(real);
  if (!info.isFile()) fail(`${shown} is not a file`);
  if (info.size > MAX_MANIFEST_BYTES) fail(`file ${shown} is over ${MAX_MANIFEST_BYTES} bytes`);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(await readFile(real));
  } catch {
    return fail(`file ${shown} is not valid UTF-8 text`);
  }
  // Files written by `echo` end with a newline that is not part of the secret.
  return text.replace(/\r?\n$/, "");
}
