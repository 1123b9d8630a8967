import { describe, expect, it } from "vitest";
import type { PromotionItem } from "../../src/promote/decide.js";
import { judgeLive } from "../../src/promote/judge-live.js";
import type { TargetLive } from "../../src/promote/read-target.js";
import type { Deployment } from "../../src/schema/deployment.js";
import type { Revision } from "../../src/schema/revision.js";

// "Already at that version" judged on the target: current only when prod runs what git names there.

const revision = (id: string, image: string, status: Revision["status"] = "DEPLOYED"): Revision => ({
  id,
  status,
  source: "external_container",
  created_at: "2026-11-25T10:00:00.000Z",
  updated_at: "2026-11-25T10:01:00.000Z",
  source_revision_config: { image_uri: image },
  status_message: null,
});
const item = (outcome: PromotionItem["outcome"]) =>
  ({ name: "docs-agent", outcome, reasons: [] }) as unknown as PromotionItem;
const SOURCE: { revision: Revision; sourceDigest: string | null } = {
  revision: revision("rev-s", "img/docs:1.2"),
  sourceDigest: null,
};
const live = (active: Revision | null, latest: Revision | null = null): TargetLive => ({
  deployment: { id: "d", name: "docs-agent" } as Deployment,
  active,
  latest,
  digest: null,
});
const judge = (l: TargetLive | undefined, outcome: PromotionItem["outcome"] = "current", source = SOURCE) =>
  judgeLive(item(outcome), source, l, "prod");

describe("judgeLive", () => {
  it("keeps current when the target's active revision runs the source's version", () => {
    expect(judge(live(revision("rev-p", "img/docs:1.2"))).outcome).toBe("current");
  });

  it("is in-git when the target runs another version, rolls out, has none or cannot be read", () => {
    const older = judge(
      live(revision("rev-p", "img/docs:1.1"), revision("rev-q", "img/docs:1.2", "BUILDING")),
    );
    expect(older).toMatchObject({ outcome: "in-git" });
    expect(older.reasons[0]).toBe(
      "in git; prod runs image_uri img/docs:1.1 (revision rev-p (DEPLOYED)); its latest is revision rev-q (BUILDING): plumb apply --env prod",
    );
    expect(judge({ ...live(null), deployment: null }).reasons).toEqual([
      "in git, not deployed in prod yet: plumb apply --env prod",
    ]);
    expect(judge(live(null)).outcome).toBe("in-git");
    expect(judge({ error: "connect ECONNREFUSED" }).reasons[0]).toMatch(
      /^prod could not be read \(connect ECONNREFUSED\)/,
    );
  });

  it("compares an internal_source upload by the digests both records hold", () => {
    const source = { revision: revision("rev-s", "img/docs:1.2"), sourceDigest: "sha256:aa" };
    const running = revision("rev-p", "img/docs:1.2");
    expect(judge({ ...live(running), digest: "sha256:aa" }, "current", source).outcome).toBe("current");
    expect(judge({ ...live(running), digest: "sha256:bb" }, "current", source).outcome).toBe("in-git");
  });

  it("leaves every other outcome, and an item with no target read, as decided", () => {
    expect(judge(live(null), "promoted").outcome).toBe("promoted");
    expect(judge(live(null), "blocked").outcome).toBe("blocked");
    expect(judge(undefined).outcome).toBe("current");
  });
});
