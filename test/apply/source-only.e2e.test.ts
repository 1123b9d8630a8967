import { execFileSync } from "node:child_process";
import { mkdir, rm, symlink, writeFile } from "node:fs/promises";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterEach, describe, expect, it } from "vitest";
import { formatPlanJson } from "../../src/report/format-json.js";
import { formatPlanText } from "../../src/report/format-text.js";
import { type Env, startEnv, writeManifests } from "../reconcile/harness.js";

// An internal_source upload holds the source and nothing else, against the local control plane:
// what plan lists is exactly what the tarball holds, and no credential next to the source (the
// repository's .git, .env files, keys, another deployment's secret file) is ever in it.

const CANARIES = ["canary-git-extraheader", "canary-dotenv", "canary-ssh-key", "canary-secret-file"];

let env: Env | undefined;
afterEach(async () => {
  await env?.cp.stop();
  await rm(env?.root ?? "/nonexistent", { recursive: true, force: true });
  env = undefined;
});

async function put(root: string, path: string, text: string) {
  await mkdir(dirname(join(root, path)), { recursive: true });
  await writeFile(join(root, path), text);
}

const docs = [
  {
    apiVersion: "plumb/v1",
    kind: "Deployment",
    metadata: { name: "docs" },
    spec: {
      source: "internal_source",
      source_path: "./agent",
      source_revision_config: { graph_config_path: "langgraph.json" },
    },
  },
  {
    apiVersion: "plumb/v1",
    kind: "Deployment",
    metadata: { name: "other" },
    spec: {
      source: "internal_container",
      source_revision_config: { image_uri: "img/other:1" },
      // Another deployment's secret file, inside docs' source directory.
      secrets: [{ name: "TOKEN", valueFrom: { file: "./agent/./config/token.txt" } }],
    },
  },
];

/** Captures each tarball the engine uploads, passing it on to the real client. */
function captureUploads(e: Env): Uint8Array[] {
  const uploads = e.ports.uploads!;
  const sent: Uint8Array[] = [];
  const uploadTarball = uploads.uploadTarball.bind(uploads);
  uploads.uploadTarball = (url, bytes, o) => (sent.push(bytes), uploadTarball(url, bytes, o));
  return sent;
}

const tarNames = (tarball: Uint8Array) =>
  execFileSync("tar", ["-tzf", "-"], { input: tarball })
    .toString()
    .split("\n")
    .filter((n) => n && !n.endsWith("/"));

describe("internal_source uploads only the source", () => {
  it("plan lists the files; the upload holds exactly those and no credential; a link into .git is refused", async () => {
    env = await startEnv();
    const sent = captureUploads(env);
    const { root } = env;
    await put(root, ".git/config", `[http]\n\textraheader = AUTHORIZATION: basic canary-git-extraheader\n`);
    await put(root, "agent/package.json", '{"name": "agent"}\n');
    await put(root, "agent/langgraph.json", '{"graphs": {"agent": "./src/agent.ts:graph"}}\n');
    await put(root, "agent/src/agent.ts", `export const graph = "${"x".repeat(2000)}";\n`);
    await put(root, "agent/.env", "API_KEY=canary-dotenv\n");
    await put(root, "agent/keys/id_ed25519", "canary-ssh-key\n");
    await put(root, "agent/config/token.txt", "canary-secret-file\n");
    await symlink("config/token.txt", join(root, "agent/token-link.txt"));
    await symlink(".env", join(root, "agent/settings.txt"));
    await put(root, "agent/.gitignore", "dist/\n");
    await put(root, "agent/dist/bundle.js", "built");
    await writeManifests(root, docs);

    const { plan } = await env.plan();
    const change = plan.changes.find((c) => c.name === "docs")!;
    const expected = [".gitignore", "langgraph.json", "package.json", "src/agent.ts"];
    expect(change.upload!.files!.map((f) => f.path)).toEqual(expected);
    expect(JSON.parse(formatPlanJson(plan)).format_version).toBe("1");
    expect(formatPlanText(plan, { color: false })).toContain(
      "upload holds 4 files, 2.0 KiB; largest: src/agent.ts (2.0 KiB), langgraph.json (46 B), package.json (18 B)",
    );

    const report = await env.apply();
    expect(report.results.find((r) => r.name === "docs")).toMatchObject({ outcome: "converged" });
    expect(sent).toHaveLength(1);
    expect(tarNames(sent[0]!)).toEqual(expected);
    const unpacked = gunzipSync(sent[0]!).toString("latin1");
    for (const canary of CANARIES) expect(unpacked).not.toContain(canary);

    // A link to the repository's metadata: the change is refused, naming the entry; nothing is sent.
    await symlink("../.git", join(root, "agent/g"));
    await put(root, "agent/src/agent.ts", "export const graph = 2;\n");
    const refused = (await env.plan()).plan.changes.find((c) => c.name === "docs")!;
    expect(refused.action).toBe("refused");
    expect(refused.errors[0]!.message).toMatch(
      /^deployments\.yaml:\d+:\d+: source_path agent\/g is a symlink that leaves agent; /,
    );
    await env.apply();
    expect(sent).toHaveLength(1);
  });
});
