import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { buildSnapshot, diffSnapshots, emptySnapshot } from "../../../src/controller/snapshot/desired.js";
import { loadManifests } from "../../../src/manifest/load.js";

const deployment = (name: string, image: string) => `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: ${name}
spec:
  source: internal_container
  source_revision_config:
    image_uri: ${image}
  secrets:
    - name: TOKEN
      value: v1
`;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "plumb-desired-"));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

const scan = async () => buildSnapshot(await loadManifests(dir));

describe("desired snapshots", () => {
  it("reports only the objects whose documents changed", async () => {
    await writeFile(join(dir, "a.yaml"), deployment("a", "img:1"));
    await writeFile(join(dir, "b.yaml"), `${deployment("b", "img:1")}---\n${deployment("c", "img:1")}`);
    const first = await scan();
    expect(diffSnapshots(emptySnapshot(), first).changed.sort()).toEqual([
      "Deployment/a",
      "Deployment/b",
      "Deployment/c",
    ]);
    await writeFile(join(dir, "b.yaml"), `${deployment("b", "img:1")}---\n${deployment("c", "img:2")}`);
    const second = await scan();
    expect(diffSnapshots(first, second)).toEqual({
      changed: ["Deployment/c"],
      removed: [],
      problemsChanged: false,
    });
  });

  it("sees a changed literal secret value although the digest is never shown", async () => {
    await writeFile(join(dir, "a.yaml"), deployment("a", "img:1"));
    const first = await scan();
    await writeFile(join(dir, "a.yaml"), deployment("a", "img:1").replace("value: v1", "value: v2"));
    const second = await scan();
    expect(diffSnapshots(first, second).changed).toEqual(["Deployment/a"]);
    expect(second.objects.get("Deployment/a")!.digest).not.toContain("v2");
  });

  it("keeps an invalid document out and lists its problems by file, without touching the others", async () => {
    await writeFile(join(dir, "a.yaml"), deployment("a", "img:1"));
    await writeFile(join(dir, "b.yaml"), deployment("b", "img:1"));
    const first = await scan();
    await writeFile(join(dir, "b.yaml"), deployment("b", "img:1").replace("name: TOKEN", "name: 1TOKEN"));
    const second = await scan();
    const changes = diffSnapshots(first, second);
    expect(changes).toEqual({ changed: [], removed: ["Deployment/b"], problemsChanged: true });
    expect([...second.invalid.keys()]).toEqual(["b.yaml"]);
    expect(second.objects.has("Deployment/a")).toBe(true);
  });
});
