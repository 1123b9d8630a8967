import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { execFileSync } from "node:child_process";
import { runImport } from "../../src/cli/adopt/import.js";
import { runApply } from "../../src/cli/sync/apply.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import { DEFAULT_API_KEY, DEFAULT_LISTENER_ID } from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { applyFlags, captureIo, startPlane } from "./reconcile-helpers.js";
import { type HoldingProxy, startHoldingProxy } from "../support/holding-proxy.js";

// plumb import as a demanding user and against a hostile server (docs/import.md "Safety"): what
// it writes must be checked out and read on any machine, and what it prints stays bounded.

let cp: RunningControlPlane;
let proxy: HoldingProxy | undefined;
let root: string;
afterEach(async () => {
  await proxy?.close();
  proxy = undefined;
  await cp?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

const postContainers = async (...names: string[]) => {
  for (const name of names) {
    const res = await fetch(`${cp.url}/v2/deployments`, {
      method: "POST",
      headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
      body: JSON.stringify({
        name,
        source: "internal_container",
        source_config: {},
        source_revision_config: { image_uri: `img/${name}:1` },
        secrets: [],
      }),
    });
    if (res.status !== 201) throw new Error(`create ${name}: ${res.status} ${await res.text()}`);
  }
};

const flags = (over: Record<string, unknown> = {}) => ({ out: root, name: [] as string[], ...over });

const firstLine = async (path: string) => (await readFile(path, "utf8")).split("\n")[0];

describe("plumb import, hostile and demanding", () => {
  it("the schema comment is the repository's copy relative to the file, else the published id", async () => {
    // It was the schema where plumb is installed, relative to --out: `../../../usr/lib/...` or
    // `../../home/me/plumb/...`, a path of one machine committed to git.
    ({ cp, root } = await startPlane());
    await postContainers("alpha");
    const bare = join(root, "bare");
    expect(await runImport(flags({ out: bare, organization: true }), captureIo(cp))).toBe(0);
    const published = "# yaml-language-server: $schema=https://plumb.dev/schemas/plumb.schema.json";
    expect(await firstLine(join(bare, "alpha.yaml"))).toBe(published);
    expect(await firstLine(join(bare, "organization-access.yaml"))).toBe(published);
    // A repository with its own copy (plumb schemas --out schemas): relative to the written file.
    const repo = join(root, "repo");
    await mkdir(join(repo, ".git"), { recursive: true });
    await mkdir(join(repo, "schemas"));
    await writeFile(join(repo, "schemas", "plumb.schema.json"), "{}\n");
    const out = join(repo, "teams", "deploy");
    expect(await runImport(flags({ out }), captureIo(cp))).toBe(0);
    expect(await firstLine(join(out, "alpha.yaml"))).toBe(
      "# yaml-language-server: $schema=../../schemas/plumb.schema.json",
    );
  });

  it("a huge organization name or id is printed cut short and escaped, never whole", async () => {
    // A platform answering a 1 MB display_name had import print all of it on one line (a CI log
    // of megabytes); a bidi override (U+202E) reordered the rest of the terminal line.
    ({ cp, root } = await startPlane());
    await postContainers("alpha");
    const huge = `Acme\u202e${"x".repeat(1_000_000)}`;
    proxy = await startHoldingProxy(cp.url, {
      rewrite: (method, url, body) => {
        const text = body.toString("utf8");
        if (url.startsWith("/api/v1/organizations"))
          return Buffer.from(
            JSON.stringify({ ...JSON.parse(text), display_name: huge, id: "o".repeat(200_000) }),
          );
        if (method === "GET" && url.startsWith("/v2/deployments"))
          return Buffer.from(text.replace(/"id":"([^"]+)"/, `"id":"$1${"i".repeat(300_000)}"`));
        return body;
      },
    });
    const io = captureIo(cp);
    io.env = { ...io.env, PLUMB_API_URL: proxy.url, PLUMB_PLATFORM_URL: proxy.url };
    expect(await runImport(flags({ organization: true }), io)).toBe(0);
    expect(io.out().length).toBeLessThan(2_000);
    expect(io.out()).toContain('OrganizationAccess of "Acme\\u202exxx');
    expect(io.out()).toContain("… (999885 more characters)");
    expect(io.out()).not.toContain("\u202e");
    for (const file of await readdir(root)) {
      const header = (await readFile(join(root, file), "utf8")).split("\n").slice(0, 2).join("\n");
      expect(header.length).toBeLessThan(400);
    }
  });

  it("a live name Windows reserves (aux, CON, lpt1) is written to a file every clone can check out", async () => {
    // aux.yaml is the AUX device on Windows: git there cannot check it out, so the clone fails.
    ({ cp, root } = await startPlane());
    await postContainers("aux", "CON", "lpt1", "console", "beta");
    const io = captureIo(cp);
    expect(await runImport(flags(), io)).toBe(0);
    expect((await readdir(root)).sort()).toEqual([
      "CON_.yaml",
      "aux_.yaml",
      "beta.yaml",
      "console.yaml",
      "lpt1_.yaml",
    ]);
    expect(io.out()).toContain("note: written as aux_.yaml: aux.yaml names a device on Windows (AUX)");
    // The manifests keep the live names: plan finds each one and changes nothing.
    const plan = captureIo(cp);
    await planCommand(plan).parseAsync(["node", "plan", root, "--output", "json"]);
    process.exitCode = 0;
    const parsed = JSON.parse(plan.out()) as { summary: Record<string, number> };
    expect(parsed.summary).toMatchObject({ create: 0, update: 0, noop: 5 });
  });

  it("a deployment plumb applies from another directory (a status store nearby) is not imported again", async () => {
    // Import read the stores above --out and wrote the manifest anyway: two directories then
    // applied and pruned one deployment, and the root's plan failed on duplicate-name.
    ({ cp, root } = await startPlane());
    execFileSync("git", ["init", "-q", root]);
    await mkdir(join(root, "platform"));
    await writeFile(
      join(root, "platform", "alpha.yaml"),
      "apiVersion: plumb/v1\nkind: OrganizationAccess\nmetadata:\n  name: acme\nspec:\n  invites_enabled: false\n---\napiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: alpha\nspec:\n  source: internal_container\n  source_revision_config:\n    image_uri: img/alpha:1\n",
    );
    const apply = captureIo(cp);
    apply.env = { ...apply.env, PLUMB_PLATFORM_URL: cp.url };
    expect(await runApply(root, applyFlags(), apply)).toBe(0);
    await postContainers("beta");
    const io = captureIo(cp);
    io.env = { ...io.env, PLUMB_PLATFORM_URL: cp.url };
    const out = join(root, "newteam");
    expect(await runImport(flags({ out, organization: true }), io)).toBe(0);
    expect(io.out()).toContain("skipped Deployment alpha (");
    expect(io.out()).toContain("plumb already applies it from another directory");
    expect(io.out()).toMatch(/skipped OrganizationAccess of "[^"]*": plumb already applies it/);
    expect(await readdir(out)).toEqual(["beta.yaml"]);
    // The repository as a whole still validates and plans: beta is to be managed, nothing else.
    const plan = captureIo(cp);
    plan.env = { ...plan.env, PLUMB_PLATFORM_URL: cp.url };
    await planCommand(plan).parseAsync(["node", "plan", root, "--output", "json"]);
    process.exitCode = 0;
    expect((JSON.parse(plan.out()) as { summary: Record<string, number> }).summary).toMatchObject({
      create: 0,
      update: 0,
      noop: 3,
    });
  });

  it("never writes a credential a server answered: a URL with a token, the run's own API key, secret values", async () => {
    // custom_url https://agent:TOKEN@host went into git as it came, and so did the run's API key
    // echoed into an annotation; a server answering secret values unmasked is written only names.
    ({ cp, root } = await startPlane({ mode: "self-hosted" }));
    const post = async (name: string, sourceConfig: Record<string, unknown>) => {
      const res = await fetch(`${cp.url}/v2/deployments`, {
        method: "POST",
        headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
        body: JSON.stringify({
          name,
          source: "external_container",
          source_config: { listener_id: DEFAULT_LISTENER_ID, ...sourceConfig },
          source_revision_config: { image_uri: `registry.example/${name}:1` },
          secrets: [{ name: "OPENAI_API_KEY", value: "sk-live-0123456789" }],
        }),
      });
      expect(res.status).toBe(201);
    };
    await post("tokenurl", { custom_url: "https://agent:gh0-t0ken-s3cr3t@agent.internal.example" });
    await post("echo", { resource_spec: { annotations: { owner: `key ${DEFAULT_API_KEY}` } } });
    await post("clean", {});
    proxy = await startHoldingProxy(cp.url, {
      rewrite: (method, url, body) =>
        method === "GET" && url.startsWith("/v2/deployments")
          ? Buffer.from(body.toString("utf8").split('"********"').join('"sk-live-0123456789"'))
          : body,
    });
    const io = captureIo(cp);
    io.env = { ...io.env, PLUMB_API_URL: proxy.url };
    expect(await runImport(flags(), io)).toBe(0);
    expect(await readdir(root)).toEqual(["clean.yaml"]);
    expect(io.out()).toContain("skipped Deployment tokenurl (");
    expect(io.out()).toContain(
      "spec.source_config.custom_url carries credentials (user:password@host), which import never writes to git",
    );
    expect(io.out()).toContain(
      "spec.source_config.resource_spec.annotations.owner holds one of plumb's own credentials",
    );
    const clean = await readFile(join(root, "clean.yaml"), "utf8");
    expect(clean).toContain("valueFrom: { env: OPENAI_API_KEY }");
    for (const text of [io.out(), clean])
      for (const secret of ["gh0-t0ken-s3cr3t", DEFAULT_API_KEY, "sk-live-0123456789"])
        expect(text).not.toContain(secret);
  });

  it("a server alternating two pages of its list is stopped, not listed for ever", async () => {
    // The list stopped on a page equal to the one before it; pages A, B, A, B, ... never ended,
    // the process growing until it died.
    ({ cp, root } = await startPlane());
    await postContainers(...Array.from({ length: 200 }, (_, i) => `d${i}`));
    const pages = new Map<number, Buffer>();
    proxy = await startHoldingProxy(cp.url, {
      rewrite: (method, url, body) => {
        if (method !== "GET" || !url.startsWith("/v2/deployments?")) return body;
        const offset = Number(new URL(url, "http://x").searchParams.get("offset"));
        if (offset < 200) pages.set(offset, body);
        // Past the end: the first two pages again, in turn (a cap keeps a failing run finite).
        return offset < 200 || offset > 5_000 ? body : pages.get(offset % 200 === 0 ? 0 : 100)!;
      },
    });
    const io = captureIo(cp);
    io.env = { ...io.env, PLUMB_API_URL: proxy.url };
    const failed = runImport(flags(), io);
    await expect(failed).rejects.toMatchObject({ code: "unexpected-response" });
    await expect(failed).rejects.toThrow("is the page at offset 0 again");
    expect(proxy.requests.filter((r) => r.url.startsWith("/v2/deployments?")).length).toBe(3);
    expect(await readdir(root)).toEqual([]);
  });

  it("run again, it writes only the deployments made since, leaving the files of the first run as edited", async () => {
    // The second run was refused whole (file-exists: alpha.yaml), and --force replaced every file.
    ({ cp, root } = await startPlane());
    await postContainers("alpha");
    expect(await runImport(flags(), captureIo(cp))).toBe(0);
    const edited = `${await readFile(join(root, "alpha.yaml"), "utf8")}# reviewed by the team\n`;
    await writeFile(join(root, "alpha.yaml"), edited);
    await postContainers("beta");
    const io = captureIo(cp);
    expect(await runImport(flags(), io)).toBe(0);
    expect(io.out()).toMatch(/skipped Deployment alpha: already defined at alpha.yaml:\d+/);
    expect((await readdir(root)).sort()).toEqual(["alpha.yaml", "beta.yaml"]);
    expect(await readFile(join(root, "alpha.yaml"), "utf8")).toBe(edited);
    // --force still replaces it, as before.
    expect(await runImport(flags({ force: true, name: ["alpha"] }), captureIo(cp))).toBe(0);
    expect(await readFile(join(root, "alpha.yaml"), "utf8")).not.toContain("reviewed by the team");
  });

  it("--name of a live name that cannot be a manifest's is skipped with its reason, not called missing", async () => {
    // It was "no live deployment named ../x" (not-found) for a deployment the listing had, and
    // --name beta printed a skip line for every other unusable name of the tenant.
    ({ cp, root } = await startPlane());
    await postContainers("alpha", "beta", "gamma");
    proxy = await startHoldingProxy(cp.url, {
      rewrite: (method, url, body) =>
        method === "GET" && url.startsWith("/v2/deployments")
          ? Buffer.from(
              body
                .toString("utf8")
                .split('"name":"alpha"')
                .join('"name":"../x"')
                .split('"name":"gamma"')
                .join('"name":"g h"'),
            )
          : body,
    });
    const asked = captureIo(cp);
    asked.env = { ...asked.env, PLUMB_API_URL: proxy.url };
    expect(await runImport(flags({ name: ["../x"] }), asked)).toBe(0);
    expect(asked.out()).toContain('skipped deployment "../x"');
    expect(asked.out()).not.toContain('"g h"');
    const beta = captureIo(cp);
    beta.env = { ...beta.env, PLUMB_API_URL: proxy.url };
    expect(await runImport(flags({ name: ["beta"] }), beta)).toBe(0);
    expect(beta.out()).not.toContain("skipped");
    expect(await readdir(root)).toEqual(["beta.yaml"]);
  });
});
