import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertBuilt, runCli } from "../support/built-cli.js";

// plumb controller --env: a name no Environment defines, or --env on a tree without environments,
// is a usage error at startup (exit 64), before anything is reconciled.

let dir: string;
let plain: string;
let broken: string;
beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), "plumb-ctl-env-flag-"));
  plain = await mkdtemp(join(tmpdir(), "plumb-ctl-env-plain-"));
  broken = await mkdtemp(join(tmpdir(), "plumb-ctl-env-broken-"));
  // staging's key written in git: refused (literal-api-key), so staging is not among those defined.
  await writeFile(
    join(broken, "env-staging.yaml"),
    "apiVersion: plumb/v1\nkind: Environment\nmetadata: {name: staging}\nspec: {api_url: 'http://127.0.0.1:9', api_key: literal-key-in-git}\n",
  );
  await writeFile(
    join(broken, "env-prod.yaml"),
    "apiVersion: plumb/v1\nkind: Environment\nmetadata: {name: prod}\nspec: {api_url: 'http://127.0.0.1:9', api_key: {env: PROD_KEY}}\n",
  );
  await writeFile(
    join(dir, "env-prod.yaml"),
    "apiVersion: plumb/v1\nkind: Environment\nmetadata: {name: prod}\nspec: {api_url: 'http://127.0.0.1:9', api_key: {env: PROD_KEY}}\n",
  );
  await writeFile(
    join(plain, "a.yaml"),
    "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {source: internal_container, source_revision_config: {image_uri: 'img:1'}}\n",
  );
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
  await rm(plain, { recursive: true, force: true });
  await rm(broken, { recursive: true, force: true });
});

const controller = (root: string, ...args: string[]) =>
  runCli(["controller", "--dir", root, "--listen", "127.0.0.1:0", ...args], {
    PLUMB_API_URL: "http://127.0.0.1:9",
    PLUMB_API_KEY: "k",
  });

it("refuses an environment no Environment document defines", async () => {
  const { code, output } = await controller(dir, "--env", "qa");
  expect(code).toBe(64);
  expect(output).toContain('unknown environment "qa" in --env; defined: prod');
}, 30_000);

it("refuses --env on a tree without environments", async () => {
  const { code, output } = await controller(plain, "--env", "prod");
  expect(code).toBe(64);
  expect(output).toContain("no kind: Environment document is defined");
}, 30_000);

it("names the errors of an Environment document that failed validation, not 'unknown environment'", async () => {
  const { code, output } = await controller(broken, "--env", "staging");
  // It said `unknown environment "staging" in --env; defined: prod` (exit 64), hiding why.
  expect(output).not.toContain("unknown environment");
  expect(output).toContain(
    'env-staging.yaml:4:48: spec.api_key must not be written in git; name where plumb reads it: {env: VAR} or {file: PATH} [literal-api-key]; --env "staging" is not among the environments defined (prod) while the manifests have errors: run plumb validate and fix them [invalid-manifests]',
  );
  expect(output).not.toContain("literal-key-in-git");
  expect(code).toBe(1);
}, 30_000);
