import { mkdir, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PlumbError } from "../../src/errors.js";
import { loadManifests } from "../../src/manifest/load.js";
import { loadSecretValues } from "../../src/manifest/secrets.js";
import { useTempRoots } from "./helpers.js";
import type { DeploymentManifest } from "../../src/schema/manifest.js";
import type { LoadedManifest } from "../../src/manifest/types.js";

const t = useTempRoots("plumb-secrets-");
const { put } = t;

/** Writes one deployment with the given secrets list under team/ and loads it. */
async function load(secrets: string): Promise<LoadedManifest<DeploymentManifest>> {
  await put(
    "team/app.yaml",
    `apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: app}\nspec:\n  source: internal_container\n  secrets:\n${secrets}`,
  );
  const { manifests, problems } = await loadManifests(t.root);
  expect(problems).toEqual([]);
  return manifests[0] as LoadedManifest<DeploymentManifest>;
}

const failure = async (promise: Promise<unknown>): Promise<PlumbError> => {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PlumbError);
  return error as PlumbError;
};

describe("loadSecretValues", () => {
  it("resolves literal, env and file values (dropping one trailing newline)", async () => {
    await put("secrets/token.txt", "s3cret-token\n");
    const loaded = await load(
      "    - {name: LEVEL, value: info}\n    - name: KEY\n      valueFrom: {env: MY_KEY}\n    - name: TOKEN\n      valueFrom: {file: ../secrets/token.txt}\n",
    );
    const values = await loadSecretValues(loaded, { root: t.root, env: { MY_KEY: "k-123" } });
    expect(values).toEqual([
      { name: "LEVEL", value: "info" },
      { name: "KEY", value: "k-123" },
      { name: "TOKEN", value: "s3cret-token" },
    ]);
  });

  it("a missing env var names file, line and secret", async () => {
    const loaded = await load("    - name: KEY\n      valueFrom: {env: MY_KEY}\n");
    const error = await failure(loadSecretValues(loaded, { root: t.root, env: {} }));
    expect(error.code).toBe("secret-unresolved");
    expect(error.message).toBe(
      "team/app.yaml:7:7: secret KEY: environment variable MY_KEY is not set or empty",
    );
  });

  it("never reads plumb's own credentials for a deployment, set or not", async () => {
    for (const variable of ["PLUMB_API_KEY", "PLUMB_GIT_TOKEN", "PLUMB_WEBHOOK_SECRET"]) {
      // validate refuses the name (secret-env-credential); the read refuses it again on its own.
      const loaded = await load("    - name: HARMLESS\n      valueFrom: {env: MY_KEY}\n");
      loaded.manifest.spec.secrets![0]!.valueFrom = { env: variable };
      const error = await failure(
        loadSecretValues(loaded, { root: t.root, env: { [variable]: "plumb-own-credential" } }),
      );
      expect(error.code).toBe("secret-unresolved");
      expect(error.message).toContain(
        `team/app.yaml:7:7: secret HARMLESS: ${variable} is one of plumb's own`,
      );
      expect(error.message).not.toContain("plumb-own-credential");
    }
    const other = await load("    - name: KEY\n      valueFrom: {env: PLUMB_TEST_TOKEN}\n");
    expect(await loadSecretValues(other, { root: t.root, env: { PLUMB_TEST_TOKEN: "t" } })).toEqual([
      { name: "KEY", value: "t" },
    ]);
  });

  it("a missing file", async () => {
    const loaded = await load("    - name: TOKEN\n      valueFrom: {file: nope.txt}\n");
    const error = await failure(loadSecretValues(loaded, { root: t.root, env: {} }));
    expect(error.message).toContain("secret TOKEN: file team/nope.txt does not exist");
  });

  it("a symlink leading outside the root is refused and its content never shown", async () => {
    await writeFile(join(t.outside, "stolen.txt"), "do-not-leak");
    await mkdir(join(t.root, "team"), { recursive: true });
    await symlink(join(t.outside, "stolen.txt"), join(t.root, "team", "link.txt"));
    const loaded = await load("    - name: TOKEN\n      valueFrom: {file: link.txt}\n");
    const error = await failure(loadSecretValues(loaded, { root: t.root, env: {} }));
    expect(error.message).toContain("outside the manifest root through a symlink");
    expect(error.message).not.toContain("do-not-leak");
  });

  it("an env value is never part of an error", async () => {
    const loaded = await load(
      "    - name: A\n      valueFrom: {env: A}\n    - name: B\n      valueFrom: {env: B}\n",
    );
    const error = await failure(loadSecretValues(loaded, { root: t.root, env: { A: "value-of-a" } }));
    expect(error.message).toContain("secret B");
    expect(error.message).not.toContain("value-of-a");
  });

  it("a file inside a .git directory is refused, also through a symlink, and never read", async () => {
    await put(".git/config", "[http]\n\textraheader = AUTHORIZATION: basic canary-git\n");
    const loaded = await load("    - {name: A, valueFrom: {file: cfg.txt}}\n");
    await symlink("../.git/config", join(t.root, "team", "cfg.txt"));
    const error = await failure(loadSecretValues(loaded, { root: t.root }));
    expect(error.message).toBe(
      "team/app.yaml:7:8: secret A: file team/cfg.txt is inside a .git directory; keep the secret in a file of its own",
    );
    expect(error.message).not.toContain("canary-git");
  });
});
