import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { definedEnvironments } from "../../../src/controller/environments/environment-set.js";
import { followEnvironments, type Roster } from "../../../src/controller/environments/environment-roster.js";
import type { LoadResult } from "../../../src/manifest/load.js";
import { checkFiles } from "../../manifest/helpers.js";

// Which environments a running controller follows after a read of the tree: added, removed,
// restarted (connection changed), only followed (defaults, name_suffix), or kept at their last
// valid document while the one in git is invalid.

const env = (name: string, spec: string) => `apiVersion: plumb/v1
kind: Environment
metadata: {name: ${name}}
spec: {${spec}}
`;
const STAGING = env("staging", `api_url: "http://127.0.0.1:1", api_key: {env: K}`);
const PROD = env("prod", `api_url: "http://127.0.0.1:2", api_key: {env: K}`);

const rosterOf = (tree: LoadResult): Roster =>
  new Map((tree.environments ?? []).map((e) => [e.manifest.metadata.name, e]));
const follow = (before: Record<string, string>, after: Record<string, string>, requested: string[] = []) => {
  const change = followEnvironments(rosterOf(checkFiles(before)), checkFiles(after), requested);
  return { ...change, next: [...change.next.keys()].sort(), invalid: Object.fromEntries(change.invalid) };
};

describe("followEnvironments", () => {
  it("starts an environment added and stops one removed", () => {
    expect(follow({ "s.yaml": STAGING }, { "s.yaml": STAGING, "p.yaml": PROD })).toMatchObject({
      added: ["prod"],
      removed: [],
      restarted: [],
      next: ["prod", "staging"],
    });
    expect(follow({ "s.yaml": STAGING, "p.yaml": PROD }, { "s.yaml": STAGING })).toMatchObject({
      added: [],
      removed: ["prod"],
      next: ["staging"],
    });
  });

  it("restarts on a changed api_url, api_key source or tenant_id; follows defaults and name_suffix", () => {
    const changed = (spec: string) => follow({ "p.yaml": PROD }, { "p.yaml": env("prod", spec) }).restarted;
    expect(changed(`api_url: "http://127.0.0.1:3", api_key: {env: K}`)).toEqual(["prod"]);
    expect(changed(`api_url: "http://127.0.0.1:2", api_key: {env: K2}`)).toEqual(["prod"]);
    expect(changed(`api_url: "http://127.0.0.1:2", api_key: {file: key}`)).toEqual(["prod"]);
    expect(changed(`api_url: "http://127.0.0.1:2", api_key: {env: K}, tenant_id: t-2`)).toEqual(["prod"]);
    const quiet = `api_url: "http://127.0.0.1:2", api_key: {env: K}, name_suffix: -p, defaults: {labels: {tier: a}}`;
    expect(follow({ "p.yaml": PROD }, { "p.yaml": env("prod", quiet) })).toMatchObject({
      added: [],
      removed: [],
      restarted: [],
      next: ["prod"],
    });
  });

  it("keeps the last valid document of one invalid in git, with the problem, and stops it once its file is gone", () => {
    const before = { "s.yaml": STAGING, "p.yaml": PROD };
    const broken = {
      "s.yaml": STAGING,
      "p.yaml": env("prod", `api_url: "http://127.0.0.1:2", api_key: hunter2`),
    };
    const change = follow(before, broken);
    expect(change).toMatchObject({ added: [], removed: [], restarted: [], next: ["prod", "staging"] });
    expect(change.invalid.prod).toMatch(/^p\.yaml:4: spec\.api_key must not be written in git/);
    // Unparseable YAML in its file is not a removal either.
    expect(follow(before, { "s.yaml": STAGING, "p.yaml": "kind: [" }).removed).toEqual([]);
    // Nor is an emptied file (a save caught half written reads as one): only a deleted file removes.
    const emptied = [
      "",
      "# nothing here\n---\n",
      "<<<<<<< HEAD\n",
      "version https://git-lfs.github.com/spec/v1\noid sha256:" + "a".repeat(64) + "\nsize 12\n",
    ];
    for (const text of emptied) {
      const kept = follow(before, { "s.yaml": STAGING, "p.yaml": text });
      expect(kept, JSON.stringify(text)).toMatchObject({ removed: [], next: ["prod", "staging"] });
      expect(kept.invalid.prod, JSON.stringify(text)).toMatch(/^p\.yaml:1: file /);
    }
    // A file that now holds another document (the environment moved away or renamed) removes it.
    expect(
      follow(before, {
        "s.yaml": STAGING,
        "p.yaml": env("prod2", `api_url: "http://127.0.0.1:2", api_key: {env: K}`),
      }),
    ).toMatchObject({ added: ["prod2"], removed: ["prod"] });
    // The last valid document is what it keeps, not the invalid one.
    const kept = followEnvironments(rosterOf(checkFiles(before)), checkFiles(broken), []);
    expect(kept.next.get("prod")?.manifest.spec.api_key).toEqual({ env: "K" });
  });

  it("with --env, follows only the environments named", () => {
    expect(follow({ "s.yaml": STAGING }, { "s.yaml": STAGING, "p.yaml": PROD }, ["staging"])).toMatchObject({
      added: [],
      next: ["staging"],
    });
    expect(follow({}, { "s.yaml": STAGING, "p.yaml": PROD }, ["prod"])).toMatchObject({
      added: ["prod"],
      next: ["prod"],
    });
  });

  it("a second document of the same name is no switch to it: the one followed stays, reported invalid", () => {
    // a-prod.yaml is read first: it took prod over (another api_url, the same key variable), though
    // validate refuses the pair (duplicate-name) and plan and apply send nothing.
    const hijack = env("prod", `api_url: "http://127.0.0.1:9", api_key: {env: K}`);
    const change = follow(
      { "s.yaml": STAGING, "p.yaml": PROD },
      { "s.yaml": STAGING, "p.yaml": PROD, "a-prod.yaml": hijack },
    );
    expect(change).toMatchObject({ added: [], removed: [], restarted: [], next: ["prod", "staging"] });
    expect(change.invalid.prod).toMatch(/^p\.yaml:3: environment prod is already defined at a-prod\.yaml/);
    const kept = followEnvironments(
      rosterOf(checkFiles({ "s.yaml": STAGING, "p.yaml": PROD })),
      checkFiles({ "s.yaml": STAGING, "p.yaml": PROD, "a-prod.yaml": hijack }),
      [],
    );
    expect(kept.next.get("prod")?.file).toBe("p.yaml");
    // Moved to another file (the old one gone): followed.
    expect(follow({ "p.yaml": PROD }, { "a-prod.yaml": hijack })).toMatchObject({ restarted: ["prod"] });
  });

  it("a name defined twice from the start is not started until it is defined once", () => {
    const other = env("prod", `api_url: "http://127.0.0.1:9", api_key: {env: K}`);
    const twice = { "s.yaml": STAGING, "p.yaml": PROD, "a-prod.yaml": other };
    expect(follow({ "s.yaml": STAGING }, twice)).toMatchObject({ added: [], next: ["staging"] });
    expect(follow({ "s.yaml": STAGING }, { "s.yaml": STAGING, "p.yaml": PROD })).toMatchObject({
      added: ["prod"],
    });
  });
});

describe("definedEnvironments: the controller's start", () => {
  it("does not start an environment defined twice; with none other, says why", async () => {
    const root = await mkdtemp(join(tmpdir(), "plumb-env-twice-"));
    try {
      const other = env("prod", `api_url: "http://127.0.0.1:9", api_key: {env: K}`);
      await writeFile(join(root, "s.yaml"), STAGING);
      await writeFile(join(root, "p.yaml"), PROD);
      await writeFile(join(root, "a-prod.yaml"), other);
      const started = await definedEnvironments(root, { env: {} });
      expect(started?.map((e) => e.manifest.metadata.name)).toEqual(["staging"]);
      await rm(join(root, "s.yaml"));
      await expect(definedEnvironments(root, { env: {} })).rejects.toMatchObject({
        code: "invalid-manifests",
        message: expect.stringMatching(
          /^p\.yaml:3: environment prod is already defined at a-prod\.yaml:2: the controller starts no environment defined twice/,
        ) as string,
      });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
