import { mkdir, mkdtemp, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { settingsOf } from "../../src/cli/environments.js";
import type { LoadedEnvironment } from "../../src/manifest/types.js";

// An Environment's api_key from a file is read now and its path kept (ApiOptions.apiKeyFile): a 401
// reads the file again, so a key rotated there is taken up without a restart. From a variable,
// there is no file to read again.

let root: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), "plumb-env-settings-"));
  await mkdir(join(root, "environments", "keys"), { recursive: true });
  await writeFile(join(root, "environments", "keys", "prod"), "prod-key-from-file\n");
});
afterAll(async () => rm(root, { recursive: true, force: true }));

const environment = (apiKey: object): LoadedEnvironment =>
  ({
    file: "environments/prod.yaml",
    manifest: {
      apiVersion: "plumb/v1",
      kind: "Environment",
      metadata: { name: "prod" },
      spec: { api_url: "http://127.0.0.1:9", api_key: apiKey, mode: "saas" },
    },
  }) as unknown as LoadedEnvironment;

describe("settingsOf an Environment's api_key", () => {
  it("from a file: the key now, and the file's path to read again", () => {
    const { flags, env } = settingsOf(environment({ file: "keys/prod" }), root, {});
    expect(env.PLUMB_API_KEY).toBe("prod-key-from-file");
    expect(flags.apiKeyFile).toBe(join(root, "environments", "keys", "prod"));
  });

  it("never from one of plumb's own credentials other than an API key, whatever validated it", () => {
    const env = { PLUMB_GIT_TOKEN: "ghp-the-controllers-token" };
    let thrown: unknown;
    try {
      settingsOf(environment({ env: "PLUMB_GIT_TOKEN" }), root, env);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({ code: "api-config" });
    expect(String((thrown as Error).message)).toContain("spec.api_key reads PLUMB_GIT_TOKEN");
    expect(String((thrown as Error).message)).not.toContain("ghp-the");
  });

  it("from a variable: no file, whatever --api-key-file the command was given", () => {
    const { flags, env } = settingsOf(environment({ env: "PROD_KEY" }), root, { PROD_KEY: "from-env" });
    expect(env.PLUMB_API_KEY).toBe("from-env");
    expect(Object.keys(flags)).toContain("apiKeyFile");
    expect(flags.apiKeyFile).toBeUndefined();
  });

  it("a variable not set: the file and field, and a set variable of a close name it may have meant", () => {
    const env = { PROD_API_KEY: "the-real-prod-key-value", HOME: "/root" };
    const message = (name: string) => {
      try {
        settingsOf(environment({ env: name }), root, env);
      } catch (error) {
        return (error as Error).message;
      }
      return "";
    };
    expect(message("PROD_API_KYE")).toBe(
      'environment prod: spec.api_key (environments/prod.yaml) reads PROD_API_KYE, which is not set; export it (did you mean "PROD_API_KEY"?)',
    );
    expect(message("PROD_API_KYE")).not.toContain("the-real-prod-key-value");
    expect(message("STAGING_TOKEN")).toBe(
      "environment prod: spec.api_key (environments/prod.yaml) reads STAGING_TOKEN, which is not set; export it",
    );
  });

  it("a URL with credentials from a variable: refused naming the variable and the field, never the value", () => {
    const withUrl = (url: object): LoadedEnvironment =>
      ({
        ...environment({ env: "PROD_API_KEY" }),
        manifest: {
          apiVersion: "plumb/v1",
          kind: "Environment",
          metadata: { name: "prod" },
          spec: { api_url: url, api_key: { env: "PROD_API_KEY" }, mode: "saas" },
        },
      }) as unknown as LoadedEnvironment;
    const env = { PROD_URL: "https://admin:hunter2@api.example", PROD_API_KEY: "k-0123456789" };
    let thrown: unknown;
    try {
      settingsOf(withUrl({ env: "PROD_URL" }), root, env);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toMatchObject({
      code: "api-config",
      message:
        "environment prod: spec.api_url ($PROD_URL, environments/prod.yaml) carries credentials (user:password@host); remove them: the key goes in spec.api_key ({env: VAR} or {file: PATH})",
    });
    expect(String((thrown as Error).message)).not.toContain("hunter2");
  });

  it("never reads a key file inside .git, nor through a link into it (a CI checkout's token)", async () => {
    await mkdir(join(root, ".git"), { recursive: true });
    await writeFile(join(root, ".git", "config"), "[http]\n\textraheader = AUTHORIZATION: basic c2VjcmV0\n");
    await symlink("../.git/config", join(root, "environments", "innocent-key"));
    for (const file of ["../.git/config", "innocent-key"]) {
      let thrown: unknown;
      try {
        settingsOf(environment({ file }), root, {});
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toMatchObject({ code: "api-config" });
      expect((thrown as Error).message).toContain("inside a .git directory: it is never read as a setting");
      expect((thrown as Error).message).not.toContain("c2VjcmV0");
    }
  });
});
