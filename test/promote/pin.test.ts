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
});
