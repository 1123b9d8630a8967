import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settingsOf } from "../../src/cli/environments.js";
import { loadManifests } from "../../src/manifest/load.js";
import type { LoadedEnvironment } from "../../src/manifest/types.js";

// An Environment's api_url read from a variable (or a file) that the client cannot use (a query or
// a fragment, another scheme, no URL) is refused naming the Environment's setting, where it is read
// from, and never the value (docs/environments.md "kind: Environment"), as one carrying credentials
// already was: the client's own check said "--api-url must not carry a query ...; give the base URL
// and the key in PLUMB_API_KEY or --api-key-file", none of which a run with environments reads.

let root: string;
let staging: LoadedEnvironment;

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-env-url-shape-"));
  await writeFile(
    join(root, "staging.yaml"),
    "apiVersion: plumb/v1\nkind: Environment\nmetadata:\n  name: staging\nspec:\n  api_url: {env: STAGING_API_URL}\n  api_key: {env: STAGING_API_KEY}\n",
  );
  staging = (await loadManifests(root, {})).environments![0]!;
});
afterAll(async () => rm(root, { recursive: true, force: true }));

const refusal = (url: string) => {
  try {
    settingsOf(staging, root, { STAGING_API_URL: url, STAGING_API_KEY: "k".repeat(24) });
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error("expected a refusal");
};

describe("an Environment's api_url the client cannot use", () => {
  it.each([
    ["https://api.example.com/?code=tok3n-canary", "must not carry a query"],
    ["https://api.example.com#tok3n-canary", "must not carry a query (?...) or a fragment"],
    ["tok3n-canary:rest", "must be an http or https URL"],
    ["tok3n-canary", "is not a URL"],
  ])("%s: named as the Environment's setting", (url, said) => {
    const error = refusal(url);
    expect(error.code).toBe("api-config");
    expect(error.message).toContain("environment staging: spec.api_url ($STAGING_API_URL, staging.yaml:6)");
    expect(error.message).toContain(said);
    expect(error.message).not.toMatch(/--api-url|PLUMB_API_KEY|tok3n-canary/);
  });
});
