import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { environmentApiReader, settingsOf } from "../../src/cli/environments.js";
import { loadManifests } from "../../src/manifest/load.js";
import type { LoadedEnvironment } from "../../src/manifest/types.js";

// An Environment's api_url (and platform_url) is checked against the allowlist of origins before
// its api_key or tenant_id is read: a merged Environment naming a token file and its author's URL
// reads nothing, and the refusal names the Environment at file:line, never the key.

let root: string;
let environments: Map<string, LoadedEnvironment>;
const TOKEN = "eyJ-service-account-token-canary-0123456789";

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-env-pinned-"));
  await writeFile(join(root, "token"), `${TOKEN}\n`);
  const doc = (name: string, url: string, more = "") =>
    `apiVersion: plumb/v1\nkind: Environment\nmetadata:\n  name: ${name}\nspec:\n  mode: saas\n  api_url: ${url}\n  api_key: {file: ${join(root, "token")}}\n${more}`;
  await writeFile(join(root, "evil.yaml"), doc("evil", "https://attacker.example"));
  // An unreadable key: had it been read, the refusal would be api-config's "cannot read".
  await writeFile(
    join(root, "missing.yaml"),
    doc("missing", "https://attacker.example").replace(join(root, "token"), "no-such-file"),
  );
  await writeFile(
    join(root, "platform.yaml"),
    doc("platform", "https://api.example.com", "  platform_url: https://platform.attacker.example\n"),
  );
  await writeFile(join(root, "good.yaml"), doc("good", "https://API.example.com:443/"));
  const tree = await loadManifests(root, {});
  environments = new Map((tree.environments ?? []).map((e) => [e.manifest.metadata.name, e]));
});
afterAll(async () => rm(root, { recursive: true, force: true }));

const refusal = (run: () => unknown) => {
  try {
    run();
  } catch (error) {
    return error as { code: string; message: string };
  }
  throw new Error("expected a refusal");
};
const ALLOW = { allowApiOrigin: ["https://api.example.com"] };

describe("settingsOf with an allowlist", () => {
  it("refuses an unlisted api_url, naming the Environment at file:line, never the key", () => {
    const error = refusal(() => settingsOf(environments.get("evil")!, root, {}, ALLOW));
    expect(error.code).toBe("api-origin-not-allowed");
    expect(error.message).toContain(
      "environment evil (evil.yaml:7): spec.api_url: https://attacker.example is not an allowed API origin (--allow-api-origin: https://api.example.com)",
    );
    expect(error.message).not.toContain("canary");
  });

  it("refuses before the key file is read", () => {
    const error = refusal(() => settingsOf(environments.get("missing")!, root, {}, ALLOW));
    expect(error.code).toBe("api-origin-not-allowed");
  });

  it("refuses an unlisted platform_url", () => {
    const error = refusal(() => settingsOf(environments.get("platform")!, root, {}, ALLOW));
    expect(error.message).toContain("environment platform (platform.yaml:9): spec.platform_url");
  });

  it("reads the list from PLUMB_ALLOWED_API_ORIGINS without the flag", () => {
    const env = { PLUMB_ALLOWED_API_ORIGINS: "https://api.example.com" };
    expect(refusal(() => settingsOf(environments.get("evil")!, root, env)).code).toBe(
      "api-origin-not-allowed",
    );
  });

  it("reads a listed one as before, and hands the list on to the session", () => {
    const { flags, env } = settingsOf(environments.get("good")!, root, {}, ALLOW);
    expect(env.PLUMB_API_KEY).toBe(TOKEN);
    expect(flags.allowApiOrigin).toEqual(["https://api.example.com"]);
  });

  it("without a list, reads what the Environment names, as before", () => {
    expect(settingsOf(environments.get("evil")!, root, {}).env.PLUMB_API_KEY).toBe(TOKEN);
  });
});

describe("the controller's reader of Environment settings", () => {
  it("says once that nothing is pinned when no list is given", () => {
    let told = 0;
    const read = environmentApiReader({}, {}, () => told++);
    read(environments.get("good")!, root);
    read(environments.get("evil")!, root);
    expect(told).toBe(1);
  });

  it("says nothing with a list, and refuses an unlisted Environment", () => {
    let told = 0;
    const read = environmentApiReader(ALLOW, {}, () => told++);
    expect(read(environments.get("good")!, root).allowedOrigins?.origins).toEqual(
      new Set(["https://api.example.com"]),
    );
    expect(refusal(() => read(environments.get("evil")!, root)).code).toBe("api-origin-not-allowed");
    expect(told).toBe(0);
  });
});
