import { describe, expect, it } from "vitest";
import { createEnvironmentLoad } from "../../../src/controller/environments/environment-load.js";
import type { LoadResult } from "../../../src/manifest/load.js";
import { checkFiles } from "../../manifest/helpers.js";

// One read of the tree serves each environment's scan of one trigger; a scan that is not part of
// a trigger's round (a prune-delay rescan, a second scan of the same environment) reads afresh.

const TREE = {
  "env-staging.yaml": `apiVersion: plumb/v1
kind: Environment
metadata: {name: staging}
spec: {api_url: "http://127.0.0.1:1", api_key: {env: K}, name_suffix: -staging}
`,
  "env-prod.yaml": `apiVersion: plumb/v1
kind: Environment
metadata: {name: prod}
spec: {api_url: "http://127.0.0.1:2", api_key: {env: K}}
`,
  "a.yaml": `apiVersion: plumb/v1
kind: Deployment
metadata: {name: alpha}
spec:
  source: internal_container
  source_revision_config: {image_uri: "img:1"}
environments:
  prod: {spec: {source_revision_config: {image_uri: "img:prod"}}}
`,
};

describe("createEnvironmentLoad", () => {
  it("shares one read between environments of a trigger and resolves each one's view", async () => {
    let reads = 0;
    const load = createEnvironmentLoad(async (): Promise<LoadResult> => {
      reads++;
      return checkFiles(TREE);
    });
    load.next();
    // A trigger's scans start together (the controller's scanAll): one read.
    const [staging, prod] = await Promise.all([
      load.forEnvironment("staging")("/root"),
      load.forEnvironment("prod")("/root"),
    ]);
    expect(reads).toBe(1);
    expect(staging.manifests.map((m) => m.manifest.metadata.name)).toEqual(["alpha-staging"]);
    const image = (r: LoadResult) =>
      (r.manifests[0]!.manifest.spec as { source_revision_config: { image_uri: string } })
        .source_revision_config.image_uri;
    expect(image(prod)).toBe("img:prod");
    expect(image(staging)).toBe("img:1");
    // staging scans again without a trigger (its prune delay): the tree is read afresh.
    await load.forEnvironment("staging")("/root");
    expect(reads).toBe(2);
    // A trigger: the next scans read afresh once.
    load.next();
    await Promise.all([load.forEnvironment("prod")("/root"), load.forEnvironment("staging")("/root")]);
    expect(reads).toBe(3);
    // A scan of another environment after the read was parsed reads again: no parse is kept alive.
    await load
      .forEnvironment("dev")("/root")
      .catch(() => undefined);
    expect(reads).toBe(4);
  });

  it("keeps a trigger's own read for its scans until release, and resolves with the document followed", async () => {
    let reads = 0;
    const tree = checkFiles(TREE);
    // The document followed: prod's last valid one, with a suffix git no longer has.
    const followed = checkFiles({
      ...TREE,
      "env-prod.yaml": TREE["env-prod.yaml"].replace(
        "api_key: {env: K}",
        "api_key: {env: K}, name_suffix: -p",
      ),
    }).environments!.find((e) => e.manifest.metadata.name === "prod")!;
    const load = createEnvironmentLoad(
      async () => {
        reads++;
        return tree;
      },
      (name) => (name === "prod" ? followed : undefined),
    );
    load.next();
    await load.shared("/root"); // the trigger reads which environments git defines
    const prod = await load.forEnvironment("prod")("/root"); // parsed already, and still shared
    expect(reads).toBe(1);
    expect(prod.manifests.map((m) => m.manifest.metadata.name)).toEqual(["alpha-p"]);
    load.release();
    await load.forEnvironment("staging")("/root");
    expect(reads).toBe(2);
  });

  it("follows reads in the order their triggers came: an older read finishing later is not followed", async () => {
    const pending: Array<(tree: LoadResult) => void> = [];
    const load = createEnvironmentLoad(() => new Promise<LoadResult>((resolve) => pending.push(resolve)));
    const first = load.next();
    const older = load.shared("/root");
    const second = load.next();
    const newer = load.shared("/root");
    expect(second).toBeGreaterThan(first);
    expect(pending).toHaveLength(2); // a trigger's read is its own
    pending[1]!(checkFiles(TREE));
    await newer;
    expect(load.follows(second)).toBe(true);
    pending[0]!(checkFiles({}));
    await older;
    expect(load.follows(first)).toBe(false);
    expect(load.follows(second)).toBe(false); // once
    // In order, each is followed.
    const third = load.next();
    expect(load.follows(third)).toBe(true);
  });
});
