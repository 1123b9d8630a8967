import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { assertBuilt, runCli } from "../support/built-cli.js";

// plumb controller --env: a name no Environment defines, or --env on a tree without environments,
// is a usage error at startup (exit 64), before anything is reconciled.

let dir: string;
let plain: string;
beforeAll(async () => {
  assertBuilt();
  dir = await mkdtemp(join(tmpdir(), "plumb-ctl-env-flag-"));
  plain = await mkdtemp(join(tmpdir(), "plumb-ctl-env-plain-"));
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
