import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import { runInProcess } from "../support/in-process-cli.js";

// --allow-api-origin is on every command that sends the API key, and a bad entry (of the flag or of
// PLUMB_ALLOWED_API_ORIGINS) is a usage error naming it, before anything is read or sent: the
// controller refuses it at startup, not each environment later.

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-allow-flag-"));
  await writeFile(
    join(dir, "a.yaml"),
    "apiVersion: plumb/v1\nkind: Deployment\nmetadata: {name: a}\nspec: {source: internal_container, source_revision_config: {image_uri: 'img:1'}}\n",
  );
});
afterAll(async () => rm(dir, { recursive: true, force: true }));

describe("--allow-api-origin", () => {
  it.each(["plan", "diff", "apply", "drift", "status", "adopt", "import", "promote", "controller"])(
    "is a repeatable option of %s",
    async (name) => {
      const command = await COMMANDS[name]!();
      expect(command.options.map((o) => o.long)).toContain("--allow-api-origin");
    },
  );

  it("is not on the commands that send nothing (validate, render, unlock)", async () => {
    for (const name of ["validate", "render", "unlock"])
      expect((await COMMANDS[name]!()).options.map((o) => o.long)).not.toContain("--allow-api-origin");
  });

  it("a path in the flag's value: usage error naming it", async () => {
    const { code, output } = await runInProcess(
      ["plan", dir, "--allow-api-origin", "https://api.example.com/v2"],
      { PLUMB_API_URL: "http://127.0.0.1:9", PLUMB_API_KEY: "k" },
    );
    expect(code).toBe(64);
    expect(output).toContain('"https://api.example.com/v2" is not an API origin');
  });

  it("the controller: a bad PLUMB_ALLOWED_API_ORIGINS entry stops it at startup (exit 64)", async () => {
    const { code, output } = await runInProcess(["controller", "--dir", dir, "--listen", "127.0.0.1:0"], {
      PLUMB_API_URL: "http://127.0.0.1:9",
      PLUMB_API_KEY: "k",
      PLUMB_ALLOWED_API_ORIGINS: "https://api.example.com,ftp://files.example.com",
    });
    expect(code).toBe(64);
    expect(output).toContain('PLUMB_ALLOWED_API_ORIGINS: "ftp://files.example.com" is not an API origin');
  });
});
