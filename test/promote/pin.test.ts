import { describe, expect, it } from "vitest";
import { unpinnedImage, unpinnedReasons, unpinnedRepoRef } from "../../src/promote/pin.js";

describe("the pin rule", () => {
  it("a tag as refs/tags/NAME and a full commit id are pinned", () => {
    expect(unpinnedRepoRef("refs/tags/v1.5.0")).toBeNull();
    expect(unpinnedRepoRef("0123456789abcdef0123456789abcdef01234567")).toBeNull();
    expect(unpinnedRepoRef("0123456789abcdef".repeat(4))).toBeNull();
  });

  it("any other repo_ref is a branch to the API: bare names (v1.5.0 too), short or upper-case ids, refs/heads", () => {
    for (const ref of [
      "main",
      "v1.5.0",
      "0123456",
      "0123456789ABCDEF0123456789ABCDEF01234567",
      "refs/heads/main",
      "refs/tags/",
    ])
      expect(unpinnedRepoRef(ref)).toContain(`repo_ref "${ref}" is a branch`);
  });

  it("an image is pinned by a digest or a tag other than latest", () => {
    expect(unpinnedImage("registry.example:5000/team/agent:1.5.0")).toBeNull();
    expect(unpinnedImage(`registry/agent@sha256:${"a".repeat(64)}`)).toBeNull();
    expect(unpinnedImage("registry.example:5000/team/agent")).toContain("no tag (latest)");
    expect(unpinnedImage("agent:latest")).toContain("the tag latest");
  });

  it("a revision's reasons cover both fields; graph_config_path never matters", () => {
    expect(unpinnedReasons({ repo_ref: "main", graph_config_path: "langgraph.json" })).toHaveLength(1);
    expect(unpinnedReasons({ repo_ref: "refs/tags/v1", image_uri: null })).toEqual([]);
    expect(unpinnedReasons({ image_uri: "agent" })).toHaveLength(1);
  });

  it("a value that is no version at all is not pinned, whatever its shape (it comes from a control plane)", () => {
    for (const ref of [
      "refs/tags/../heads/main",
      "refs/tags/v1 x",
      "refs/tags/.hidden",
      "refs/tags/v1.lock",
      "refs/tags/v1/",
      "refs/tags/a//b",
      "refs/tags/v1@{0}",
      "refs/tags/v1\n::add-mask::x",
      `refs/tags/${"v".repeat(2000)}`,
    ])
      expect(unpinnedRepoRef(ref), ref).not.toBeNull();
    expect(unpinnedRepoRef("refs/tags/release/2026.11")).toBeNull();
    for (const image of [
      "img/agent@sha256:abc",
      "img/agent:2 # prod",
      "img/agent:2\n::add-mask::x",
      "img/agent:2\u001b[31m",
      "Img/Agent:1",
      `img/agent:${"a".repeat(129)}`,
      "img/agent:",
      "img/agent:-1",
    ])
      expect(unpinnedImage(image), image).not.toBeNull();
    for (const image of [
      "localhost:5000/agent:1",
      "[::1]:5000/team/agent:v1",
      `ghcr.io/acme/agent:v1.2@sha256:${"b".repeat(64)}`,
      "agent:1.5.0_rc-2",
    ])
      expect(unpinnedImage(image), image).toBeNull();
  });

  it("a reason quotes the value escaped and cut: one line, at most a few dozen characters of it", () => {
    const reason = unpinnedImage(`img/agent:2\n::set-output name=x::${"y".repeat(3000)}`)!;
    expect(reason).not.toContain("\n::");
    expect(reason).toContain("\\n::set-output");
    expect(reason.length).toBeLessThan(300);
    expect(unpinnedReasons({ image_uri: "img/a:1", graph_config_path: "lang\u0007graph.json" })).toEqual([
      'graph_config_path "lang\\u0007graph.json" holds control characters: it is not a version',
    ]);
  });
});
