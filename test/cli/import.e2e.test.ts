import fc from "fast-check";
import { mkdir, readdir, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runImport } from "../../src/cli/adopt/import.js";
import { planCommand } from "../../src/cli/sync/plan.js";
import {
  DEFAULT_API_KEY,
  DEFAULT_INTEGRATION_ID,
  DEFAULT_LISTENER_ID,
} from "../../src/control-plane/options.js";
import type { RunningControlPlane } from "../../src/control-plane/server.js";
import { captureIo, startPlane } from "./reconcile-helpers.js";
import { startHoldingProxy } from "../support/holding-proxy.js";

// plumb import against the local control plane: the manifests it writes plan as a no-op apart
// from the secrets (whose values cannot be read back); with --adopt and the env set, a complete
// no-op. A file in the way stops it before anything is written.

let cp: RunningControlPlane;
let root: string;
afterEach(async () => {
  await cp?.stop();
  if (root) await rm(root, { recursive: true, force: true });
});

const post = async (body: unknown) => {
  const res = await api("/v2/deployments", { method: "POST", body: JSON.stringify(body) });
  if (res.status !== 201) throw new Error(`create: ${res.status} ${await res.text()}`);
  return (await res.json()) as { id: string; name: string };
};

/** Plain internal_container deployments `img/NAME:1`, created on the control plane. */
const postContainers = async (...names: string[]) => {
  for (const name of names)
    await post({
      name,
      source: "internal_container",
      source_config: {},
      source_revision_config: { image_uri: `img/${name}:1` },
      secrets: [],
    });
};

const api = (path: string, init: RequestInit = {}) =>
  fetch(`${cp.url}${path}`, {
    ...init,
    headers: { "x-api-key": DEFAULT_API_KEY, "content-type": "application/json" },
  });

/** Every deployment of the tenant deleted (between property runs). */
async function deleteAll() {
  const listed = (await (await api("/v2/deployments?limit=100")).json()) as {
    resources: Array<{ id: string }>;
  };
  for (const d of listed.resources) await api(`/v2/deployments/${d.id}`, { method: "DELETE" });
}

const flags = (over: Record<string, unknown> = {}) => ({ out: root, name: [] as string[], ...over });
const secretEnv = (names: string[]) => Object.fromEntries(names.map((n) => [n, `value-of-${n}`]));

async function planJson(env: Record<string, string>) {
  const io = captureIo(cp);
  io.env = { ...io.env, ...env };
  await planCommand(io).parseAsync(["node", "plan", root, "--output", "json"]);
  process.exitCode = 0;
  return JSON.parse(io.out()) as {
    summary: Record<string, number>;
    changes: Array<{
      name: string;
      action: string;
      revision_fields: string[];
      in_place_fields: string[];
      errors: unknown[];
    }>;
  };
}

/** Every change is the secrets' and nothing else. */
const onlySecrets = (plan: Awaited<ReturnType<typeof planJson>>) =>
  plan.changes.every(
    (c) =>
      c.errors.length === 0 &&
      (c.action === "noop" ||
        (c.in_place_fields.length === 0 && c.revision_fields.every((f) => f === "secrets"))),
  );

const container = fc.record({
  name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
  image: fc.stringMatching(/^[a-z]{1,8}\/[a-z]{1,8}:[0-9]{1,3}$/),
  namespace: fc.option(fc.stringMatching(/^[a-z]{1,10}$/), { nil: undefined }),
  customUrl: fc.option(fc.constant("https://agent.example.com"), { nil: undefined }),
  resources: fc.option(
    fc.record(
      {
        min_scale: fc.integer({ min: 1, max: 3 }),
        max_scale: fc.integer({ min: 3, max: 10 }),
        cpu: fc.constantFrom(0.1, 0.25, 0.5, 1, 2),
        cpu_limit: fc.constantFrom(1, 4),
        memory_mb: fc.constantFrom(512, 1024),
        queue_min_scale: fc.integer({ min: 1, max: 2 }),
      },
      { requiredKeys: [] },
    ),
    { nil: undefined },
  ),
  secrets: fc.uniqueArray(fc.stringMatching(/^[A-Z][A-Z0-9_]{0,10}$/), { maxLength: 3 }),
  references: fc.uniqueArray(fc.stringMatching(/^REF_[A-Z]{1,6}$/), { maxLength: 2 }),
});

describe("plumb import", () => {
  it("round trip, self-hosted containers: import then plan changes nothing but secrets (property)", async () => {
    ({ cp, root } = await startPlane({ mode: "self-hosted" }));
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(container, { selector: (c) => c.name, minLength: 1, maxLength: 3 }),
        async (specs) => {
          for (const entry of await readdir(root))
            await rm(join(root, entry), { recursive: true, force: true });
          await deleteAll();
          const secretNames: string[] = [];
          for (const s of specs) {
            secretNames.push(...s.secrets);
            await post({
              name: s.name,
              source: "external_container",
              source_config: {
                listener_id: DEFAULT_LISTENER_ID,
                ...(s.namespace ? { listener_config: { k8s_namespace: s.namespace } } : {}),
                ...(s.customUrl ? { custom_url: s.customUrl } : {}),
                ...(s.resources ? { resource_spec: s.resources } : {}),
              },
              source_revision_config: { image_uri: s.image },
              secrets: s.secrets.map((name) => ({ name, value: "live" })),
              secret_references: s.references.map((name) => ({
                name,
                secret_name: "cluster",
                secret_key: "k",
              })),
            });
          }
          const io = captureIo(cp);
          expect(await runImport(flags(), io)).toBe(0);
          const plan = await planJson(secretEnv(secretNames));

          expect(plan.summary.create).toBe(0);
          expect(plan.summary.refused).toBe(0);
          expect(onlySecrets(plan), JSON.stringify(plan.changes)).toBe(true);
        },
      ),
      { numRuns: 15 },
    );
  }, 120_000);

  it("round trip, SaaS gitrepo and internal_container: import then plan changes nothing but secrets (property)", async () => {
    ({ cp, root } = await startPlane());
    const saas = fc.oneof(
      fc.record({
        kind: fc.constant("gitrepo" as const),
        name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
        type: fc.constantFrom("dev_free", "dev", "prod"),
        buildOnPush: fc.option(fc.boolean(), { nil: undefined }),
        ref: fc.constantFrom("main", "release/1.x", "refs/tags/v1.2.0"),
        graph: fc.constantFrom("langgraph.json", "agents/langgraph.json"),
        install: fc.option(fc.constant("npm ci"), { nil: undefined }),
        secrets: fc.uniqueArray(fc.stringMatching(/^[A-Z][A-Z0-9_]{0,10}$/), { maxLength: 2 }),
      }),
      fc.record({
        kind: fc.constant("internal_container" as const),
        name: fc.stringMatching(/^[a-z][a-z0-9-]{0,20}$/),
        image: fc.stringMatching(/^[a-z]{1,8}\/[a-z]{1,8}:[0-9]{1,3}$/),
        secrets: fc.uniqueArray(fc.stringMatching(/^[A-Z][A-Z0-9_]{0,10}$/), { maxLength: 2 }),
      }),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(saas, { selector: (c) => c.name, minLength: 1, maxLength: 3 }),
        async (specs) => {
          for (const entry of await readdir(root))
            await rm(join(root, entry), { recursive: true, force: true });
          await deleteAll();
          for (const s of specs) {
            const secrets = s.secrets.map((name) => ({ name, value: "live" }));
            if (s.kind === "gitrepo") {
              // A tag never moves: build_on_push is only allowed on a branch.
              const buildOnPush = s.ref.startsWith("refs/tags/") ? undefined : s.buildOnPush;
              await post({
                name: s.name,
                source: "gitrepo",
                source_config: {
                  integration_id: DEFAULT_INTEGRATION_ID,
                  repo_url: `https://github.com/acme/${s.name}`,
                  deployment_type: s.type,
                  ...(buildOnPush === undefined ? {} : { build_on_push: buildOnPush }),
                  ...(s.install ? { install_command: s.install } : {}),
                },
                source_revision_config: { repo_ref: s.ref, graph_config_path: s.graph },
                secrets,
              });
            } else {
              await post({
                name: s.name,
                source: "internal_container",
                source_config: {},
                source_revision_config: { image_uri: s.image },
                secrets,
              });
            }
          }
          expect(await runImport(flags(), captureIo(cp))).toBe(0);
          const plan = await planJson(secretEnv(specs.flatMap((s) => s.secrets)));
          expect(plan.summary).toMatchObject({ create: 0, refused: 0 });
          expect(onlySecrets(plan), JSON.stringify(plan.changes)).toBe(true);
        },
      ),
      { numRuns: 15 },
    );
  }, 120_000);

  it("gitrepo and the organization; --adopt makes the first plan a complete no-op", async () => {
    ({ cp, root } = await startPlane());
    await post({
      name: "support",
      source: "gitrepo",
      source_config: {
        integration_id: DEFAULT_INTEGRATION_ID,
        repo_url: "https://github.com/acme/support",
        deployment_type: "prod",
        build_on_push: true,
      },
      source_revision_config: { repo_ref: "main", graph_config_path: "langgraph.json" },
      secrets: [{ name: "OPENAI_API_KEY", value: "sk-live" }],
    });
    const io = captureIo(cp);
    io.env = { ...io.env, OPENAI_API_KEY: "sk-live" };
    expect(await runImport(flags({ organization: true, adopt: true }), io)).toBe(0);
    expect(io.out()).toContain("Adopt complete: 1 recorded");
    const text = await readFile(join(root, "support.yaml"), "utf8");
    expect(text).toContain("valueFrom: { env: OPENAI_API_KEY }");
    expect(text).not.toMatch(/custom_url|repo_commit_sha|latest_revision_id|sk-live/);
    expect(await readFile(join(root, "organization-access.yaml"), "utf8")).toContain(
      "kind: OrganizationAccess",
    );
    const plan = await planJson({ OPENAI_API_KEY: "sk-live" });
    expect(plan.summary).toMatchObject({ create: 0, update: 0, refused: 0 });
  });

  it("a live secret named like plumb's own credential reads another variable, so the manifest is valid", async () => {
    // Written as valueFrom: { env: PLUMB_API_KEY }, which validation refuses (secret-env-credential):
    // the imported repository failed as a whole, and --adopt recorded nothing (exit 1).
    ({ cp, root } = await startPlane());
    await post({
      name: "alpha",
      source: "internal_container",
      source_config: {},
      source_revision_config: { image_uri: "img/a:1" },
      secrets: [
        { name: "PLUMB_API_KEY", value: "its-own-key" },
        { name: "OTHER", value: "other" },
      ],
    });
    const env = { DEPLOYMENT_PLUMB_API_KEY: "its-own-key", OTHER: "other" };
    const io = captureIo(cp);
    io.env = { ...io.env, ...env };
    expect(await runImport(flags({ adopt: true }), io)).toBe(0);
    expect(io.out()).toContain("secret PLUMB_API_KEY is read from DEPLOYMENT_PLUMB_API_KEY");
    expect(io.out()).toContain("Adopt complete: 1 recorded");
    expect(await readFile(join(root, "alpha.yaml"), "utf8")).toContain(
      "- name: PLUMB_API_KEY\n      valueFrom: { env: DEPLOYMENT_PLUMB_API_KEY }",
    );
    const plan = await planJson(env);
    expect(plan.summary).toMatchObject({ create: 0, update: 0, refused: 0, noop: 1 });
  });

  it("never overwrites without --force, writing nothing; an unknown --name writes nothing", async () => {
    ({ cp, root } = await startPlane());
    await post({
      name: "alpha",
      source: "internal_container",
      source_config: {},
      source_revision_config: { image_uri: "img/a:1" },
      secrets: [],
    });
    await post({
      name: "beta",
      source: "internal_container",
      source_config: {},
      source_revision_config: { image_uri: "img/b:1" },
      secrets: [],
    });
    await writeFile(join(root, "beta.yaml"), "# mine\n");
    await expect(runImport(flags(), captureIo(cp))).rejects.toMatchObject({ code: "file-exists" });
    expect((await readdir(root)).sort()).toEqual(["beta.yaml"]); // alpha.yaml not written either
    expect(await readFile(join(root, "beta.yaml"), "utf8")).toBe("# mine\n");
    await expect(runImport(flags({ name: ["gamma"] }), captureIo(cp))).rejects.toMatchObject({
      code: "not-found",
    });
    expect(await runImport(flags({ force: true, name: ["beta"] }), captureIo(cp))).toBe(0);
    expect(await readFile(join(root, "beta.yaml"), "utf8")).toContain("image_uri: img/b:1");
    expect((await readdir(root)).sort()).toEqual(["beta.yaml"]);
  });

  it("into a repository: what it defines in another file is left alone, and --force deletes no other object", async () => {
    // alpha and the organization were written again as alpha.yaml and organization-access.yaml
    // next to apps/mine.yaml that defines them: duplicate-name and duplicate-organization-access
    // then failed validation of the whole repository (plan, apply, the controller).
    ({ cp, root } = await startPlane());
    await postContainers("alpha", "beta");
    const mine = [
      "apiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: alpha\nspec:\n  source: internal_container",
      "  source_config: {}\n  source_revision_config:\n    image_uri: img/alpha:1\n---",
      "apiVersion: plumb/v1\nkind: OrganizationAccess\nmetadata:\n  name: acme\nspec:\n  invites_enabled: true\n",
    ].join("\n");
    await mkdir(join(root, "apps"));
    await writeFile(join(root, "apps", "mine.yaml"), mine);
    const io = captureIo(cp);
    io.env = { ...io.env, PLUMB_PLATFORM_URL: cp.url };
    expect(await runImport(flags({ organization: true }), io)).toBe(0);
    expect((await readdir(root)).sort()).toEqual(["apps", "beta.yaml"]);
    expect(io.out()).toContain("skipped Deployment alpha: already defined at apps/mine.yaml:2");
    expect(io.out()).toContain("skipped OrganizationAccess: already defined at apps/mine.yaml:12");
    const plan = await planJson({});
    expect(plan.summary).toMatchObject({ create: 0, update: 0, refused: 0 });
    // --force replaces beta.yaml whole: a second object in it would be deleted without a word.
    const gamma =
      "---\napiVersion: plumb/v1\nkind: Deployment\nmetadata:\n  name: gamma\nspec:\n  source: internal_container\n";
    const withGamma = `${await readFile(join(root, "beta.yaml"), "utf8")}${gamma}`;
    await writeFile(join(root, "beta.yaml"), withGamma);
    const refused = runImport(flags({ force: true, name: ["beta"] }), captureIo(cp));
    await expect(refused).rejects.toMatchObject({ code: "file-exists" });
    await expect(refused).rejects.toThrow("also defines Deployment gamma");
    expect(await readFile(join(root, "beta.yaml"), "utf8")).toBe(withGamma);
    expect(await readFile(join(root, "apps", "mine.yaml"), "utf8")).toBe(mine);
  });

  it("a deployment named organization-access and --organization: refused, nothing written (with --force too)", async () => {
    // Both would be organization-access.yaml: the deployments' files were written, then the
    // organization's failed (EEXIST, exit 1, a partial import); with --force it replaced the
    // deployment's file, which the output said was written.
    ({ cp, root } = await startPlane());
    await postContainers("alpha", "organization-access");
    for (const force of [false, true]) {
      const refused = runImport(flags({ organization: true, force }), captureIo(cp));
      await expect(refused).rejects.toMatchObject({ code: "file-exists" });
      await expect(refused).rejects.toThrow("organization-access.yaml");
      expect(await readdir(root)).toEqual([]);
    }
  });

  it("a server's control characters (organization name, ids) are escaped on stdout and in the files", async () => {
    // The organization's display_name and ids went to the terminal as they came: "\u001b[2J"
    // cleared the screen, a newline forged a line of output ("wrote ..."), C1's CSI too.
    ({ cp, root } = await startPlane());
    await postContainers("alpha");
    const hostile = "Acme\u001b[2J\nwrote x.yaml\u009b31m";
    const proxy = await startHoldingProxy(cp.url, {
      rewrite: (method, url, body) => {
        const text = body.toString("utf8");
        if (url.startsWith("/api/v1/organizations"))
          return Buffer.from(
            JSON.stringify({ ...JSON.parse(text), display_name: hostile, id: "org\u001b]0;t\u0007" }),
          );
        if (method === "GET" && url.startsWith("/v2/deployments"))
          return Buffer.from(text.replace(/"id":"([^"]+)"/, '"id":"$1\\u001b[1A\\u009b2K"'));
        return body;
      },
    });
    try {
      const io = captureIo(cp);
      io.env = { ...io.env, PLUMB_API_URL: proxy.url, PLUMB_PLATFORM_URL: proxy.url };
      expect(await runImport(flags({ organization: true }), io)).toBe(0);
      expect(proxy.requests.filter((r) => r.url.startsWith("/api/v1/organizations"))).toHaveLength(1);
      const files = [
        await readFile(join(root, "alpha.yaml"), "utf8"),
        await readFile(join(root, "organization-access.yaml"), "utf8"),
      ];
      // eslint-disable-next-line no-control-regex -- control characters are what this looks for
      for (const text of [io.out(), ...files]) expect(text).not.toMatch(/[\u001b\u0007\u009b]/);
      expect(io.out()).toContain('OrganizationAccess of "Acme\\u001b[2J\\nwrote x.yaml\\u009b31m"');
      expect(
        io
          .out()
          .split("\n")
          .filter((line) => line.startsWith("wrote ")),
      ).toHaveLength(2);
    } finally {
      await proxy.close();
    }
  });

  it("names that differ only in case are refused before anything is written", async () => {
    // Alpha.yaml and alpha.yaml are one file on macOS and Windows: the second write failed
    // half-way through the import (EEXIST), or with --force replaced the first deployment's file.
    ({ cp, root } = await startPlane());
    await postContainers("Alpha", "alpha", "beta");
    for (const force of [false, true]) {
      const refused = runImport(flags({ force }), captureIo(cp));
      await expect(refused).rejects.toMatchObject({ code: "file-exists" });
      await expect(refused).rejects.toThrow(
        /Alpha\.yaml and .*alpha\.yaml, one file where case does not count/,
      );
      expect(await readdir(root)).toEqual([]);
    }
    expect(await runImport(flags({ name: ["alpha", "beta"] }), captureIo(cp))).toBe(0);
    expect((await readdir(root)).sort()).toEqual(["alpha.yaml", "beta.yaml"]);
  });

  it("a live deployment nested deeper than a manifest may is skipped, the others written; an answer past 128 levels is refused whole", async () => {
    // A server's free-form field (a volume's configMap) at 70 levels was written and then refused by
    // validation (too-deep), the whole repository with it. At 2,000 (it overflowed the YAML writer's
    // stack) the answer is now refused whole before it is parsed (MAX_RESPONSE_DEPTH, 128; the
    // control plane refuses bodies past 64, so only a broken server answers so): nothing written.
    ({ cp, root } = await startPlane({ mode: "self-hosted" }));
    await post({
      name: "alpha",
      source: "external_container",
      source_config: {
        listener_id: DEFAULT_LISTENER_ID,
        listener_config: { k8s_namespace: "ns" },
        resource_spec: { volumes: [{ name: "v", configMap: { name: "deep" } }] },
      },
      source_revision_config: { image_uri: "img/alpha:1" },
      secrets: [],
    });
    await post({
      name: "beta",
      source: "external_container",
      source_config: { listener_id: DEFAULT_LISTENER_ID, listener_config: { k8s_namespace: "ns" } },
      source_revision_config: { image_uri: "img/beta:1" },
      secrets: [],
    });
    for (const depth of [70]) {
      const nested = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
      const proxy = await startHoldingProxy(cp.url, {
        rewrite: (method, url, body) =>
          method === "GET" && url.startsWith("/v2/deployments")
            ? Buffer.from(body.toString("utf8").replace('{"name":"deep"}', nested))
            : body,
      });
      try {
        const io = captureIo(cp);
        io.env = { ...io.env, PLUMB_API_URL: proxy.url };
        expect(await runImport(flags({ force: true }), io)).toBe(0);
        expect(io.out()).toMatch(
          /skipped deployment alpha \(".*"\): its live fields nest more than 64 levels/,
        );
        expect(await readdir(root)).toEqual(["beta.yaml"]);
      } finally {
        await proxy.close();
      }
    }
    expect((await planJson({})).summary).toMatchObject({ create: 0, update: 0, refused: 0 });
    const deep = `${'{"a":'.repeat(2_000)}1${"}".repeat(2_000)}`;
    const proxy = await startHoldingProxy(cp.url, {
      rewrite: (method, url, body) =>
        method === "GET" && url.startsWith("/v2/deployments")
          ? Buffer.from(body.toString("utf8").replace('{"name":"deep"}', deep))
          : body,
    });
    try {
      await rm(join(root, "beta.yaml"));
      const io = captureIo(cp);
      io.env = { ...io.env, PLUMB_API_URL: proxy.url };
      await expect(runImport(flags({ force: true }), io)).rejects.toThrow(
        /JSON nested deeper than 128 levels/,
      );
      expect(await readdir(root)).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it("a live value validation refuses is not written: that deployment is skipped, the others written", async () => {
    // A control character in a live value (here the image) was written into alpha.yaml, which
    // validation refuses (control-character): the whole repository then failed to plan.
    ({ cp, root } = await startPlane());
    await postContainers("alpha", "beta");
    const proxy = await startHoldingProxy(cp.url, {
      rewrite: (method, url, body) =>
        method === "GET" && url.startsWith("/v2/deployments")
          ? Buffer.from(body.toString("utf8").replace('"img/alpha:1"', '"img/alpha:1\\u0007"'))
          : body,
    });
    try {
      const io = captureIo(cp);
      io.env = { ...io.env, PLUMB_API_URL: proxy.url };
      expect(await runImport(flags(), io)).toBe(0);
      expect(io.out()).toMatch(
        /skipped Deployment alpha \(.*\): its manifest would not validate \(spec\.source_revision_config\.image_uri: .*U\+0007.*\[control-character\]\)/,
      );
      expect(await readdir(root)).toEqual(["beta.yaml"]);
    } finally {
      await proxy.close();
    }
    expect((await planJson({})).summary).toMatchObject({ create: 0, update: 0, refused: 0, noop: 1 });
  });

  it("--force replaces only regular files: a link or a directory in the way stops it, nothing written", async () => {
    // --force replaced a link's target wherever it pointed (here outside --out), and a directory
    // (or a dangling link) failed half-way through the import, the files before it written.
    ({ cp, root } = await startPlane());
    await postContainers("alpha", "beta", "gamma");
    const out = join(root, "deploy");
    await mkdir(out);
    const outside = join(root, "workflow.yml");
    await writeFile(outside, "# ci\n");
    for (const [name, make] of [
      ["beta", () => symlink(outside, join(out, "beta.yaml"))],
      ["beta", () => symlink(join(root, "missing.yml"), join(out, "beta.yaml"))],
      ["beta", () => mkdir(join(out, "beta.yaml"))],
    ] as const) {
      await rm(join(out, `${name}.yaml`), { recursive: true, force: true });
      await make();
      const refused = runImport(flags({ out, force: true }), captureIo(cp));
      await expect(refused).rejects.toMatchObject({ code: "file-exists" });
      await expect(refused).rejects.toThrow("beta.yaml is not a regular file");
      expect(await readdir(out)).toEqual(["beta.yaml"]);
      expect(await readFile(outside, "utf8")).toBe("# ci\n");
    }
  });

  it("--out naming a file is refused before any request, the file untouched", async () => {
    // The import listed every deployment, then failed to mkdir the file with a bare EEXIST.
    ({ cp, root } = await startPlane());
    await postContainers("alpha");
    const file = join(root, "apps.yaml");
    await writeFile(file, "# mine\n");
    const proxy = await startHoldingProxy(cp.url);
    try {
      const io = captureIo(cp);
      io.env = { ...io.env, PLUMB_API_URL: proxy.url };
      const refused = runImport(flags({ out: file }), io);
      await expect(refused).rejects.toMatchObject({ code: "usage", exitCode: 64 });
      await expect(refused).rejects.toThrow("is a file");
      expect(proxy.requests).toEqual([]);
      expect(await readFile(file, "utf8")).toBe("# mine\n");
    } finally {
      await proxy.close();
    }
  });

  it("two live deployments of one name: refused, nothing written, with advice that fits", async () => {
    // The refusal advised importing "without --organization", which neither was about.
    ({ cp, root } = await startPlane());
    await postContainers("alpha", "beta");
    const proxy = await startHoldingProxy(cp.url, {
      rewrite: (method, url, body) =>
        method === "GET" && url.startsWith("/v2/deployments")
          ? Buffer.from(body.toString("utf8").split('"name":"beta"').join('"name":"alpha"'))
          : body,
    });
    try {
      const io = captureIo(cp);
      io.env = { ...io.env, PLUMB_API_URL: proxy.url };
      const refused = runImport(flags({ force: true }), io);
      await expect(refused).rejects.toMatchObject({ code: "file-exists" });
      await expect(refused).rejects.toThrow(
        "the control plane lists two deployments of that name; rename or delete one there",
      );
      expect(await readdir(root)).toEqual([]);
    } finally {
      await proxy.close();
    }
  });

  it("a manifest over the manifests' size limit is not written: that deployment is skipped", async () => {
    // A 2 MB live image was written into a 2 MB alpha.yaml, which the loader refuses unread
    // (manifest-too-large): the whole repository then failed to plan.
    ({ cp, root } = await startPlane());
    await postContainers("alpha", "beta");
    const proxy = await startHoldingProxy(cp.url, {
      rewrite: (method, url, body) =>
        method === "GET" && url.startsWith("/v2/deployments")
          ? Buffer.from(body.toString("utf8").replace('"img/alpha:1"', `"img/${"a".repeat(2_000_000)}:1"`))
          : body,
    });
    try {
      const io = captureIo(cp);
      io.env = { ...io.env, PLUMB_API_URL: proxy.url };
      expect(await runImport(flags(), io)).toBe(0);
      expect(io.out()).toMatch(
        /skipped Deployment alpha \(.*\): its manifest would not validate \(file is \d+ bytes, over the 1048576-byte limit/,
      );
      expect(await readdir(root)).toEqual(["beta.yaml"]);
    } finally {
      await proxy.close();
    }
    expect((await planJson({})).summary).toMatchObject({ create: 0, update: 0, refused: 0, noop: 1 });
  });

  it("a deployment being deleted (AWAITING_DELETE) is skipped: the next apply would create it again", async () => {
    ({ cp, root } = await startPlane({ deploymentReadySeconds: 3_600 }));
    const alpha = await post({
      name: "alpha",
      source: "internal_container",
      source_config: {},
      source_revision_config: { image_uri: "img/alpha:1" },
      secrets: [],
    });
    await postContainers("beta");
    expect((await api(`/v2/deployments/${alpha.id}`, { method: "DELETE" })).status).toBeLessThan(300);
    const listed = (await (await api("/v2/deployments?limit=100")).json()) as {
      resources: Array<{ name: string; status: string }>;
    };
    expect(listed.resources.find((d) => d.name === "alpha")?.status).toBe("AWAITING_DELETE");
    const io = captureIo(cp);
    expect(await runImport(flags(), io)).toBe(0);
    expect(io.out()).toContain(
      `skipped deployment alpha ("${alpha.id}"): it is being deleted (AWAITING_DELETE)`,
    );
    expect(await readdir(root)).toEqual(["beta.yaml"]);
  });

  it("never writes outside --out: a live name with path separators is skipped, the others written", async () => {
    ({ cp, root } = await startPlane());
    await postContainers("alpha", "beta");
    // A control plane that answers a name ours refuses: beta as ../escaped, and as "a b\u001b[2J".
    const out = join(root, "deep", "out");
    await mkdir(out, { recursive: true });
    for (const hostile of ["../escaped", "../../escaped", "a b\u001b[2J"]) {
      const proxy = await startHoldingProxy(cp.url, {
        rewrite: (method, url, body) =>
          method === "GET" && url.startsWith("/v2/deployments")
            ? Buffer.from(
                body
                  .toString("utf8")
                  .split('"name":"beta"')
                  .join(`"name":${JSON.stringify(hostile)}`),
              )
            : body,
      });
      try {
        const io = captureIo(cp);
        io.env = { ...io.env, PLUMB_API_URL: proxy.url };
        expect(await runImport(flags({ out, force: true }), io)).toBe(0);
        expect(io.out()).toContain(`skipped deployment ${JSON.stringify(hostile)}`);
        expect(io.out()).not.toContain("\u001b");
      } finally {
        await proxy.close();
      }
    }
    expect(await readdir(out)).toEqual(["alpha.yaml"]);
    expect((await readdir(join(root, "deep"))).sort()).toEqual(["out"]);
    expect((await readdir(root)).sort()).toEqual(["deep"]);
  });
});
