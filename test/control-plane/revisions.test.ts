import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { type Api, ManualClock, gitrepo, start } from "./helpers.js";

const statusOf = async (api: Api, id: string, rid: string) =>
  (await api.call("GET", `/v2/deployments/${id}/revisions/${rid}`)).body.status as string;

async function withServer(fn: (api: Api, clock: ManualClock) => Promise<void>, options = {}) {
  const clock = new ManualClock();
  const api = await start({ clock, revisionSeconds: 1, ...options });
  try {
    await fn(api, clock);
  } finally {
    await api.cp.stop();
  }
}

describe("revision lifecycle", () => {
  it("walks a buildable source through the build states to DEPLOYED", () =>
    withServer(async (api, clock) => {
      const d = (await api.call("POST", "/v2/deployments", gitrepo("build"))).body;
      const seen: string[] = [];
      for (let i = 0; i < 7; i++, clock.advance(1))
        seen.push(await statusOf(api, d.id, d.latest_revision_id));
      expect(seen).toEqual([
        "CREATING",
        "QUEUED",
        "AWAITING_BUILD",
        "BUILDING",
        "AWAITING_DEPLOY",
        "DEPLOYING",
        "DEPLOYED",
      ]);
      const revision = (await api.call("GET", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`))
        .body;
      expect(Object.keys(revision).sort()).toEqual([
        "created_at",
        "id",
        "source",
        "source_revision_config",
        "status",
        "status_message",
        "updated_at",
      ]);
      // Spec 2.8: a revision's source revision fields are 2.3's SourceRevisionConfig, every field
      // answered, null when unset, as in the deployment (they were left out: no image_uri key).
      expect(revision.source_revision_config).toEqual({
        repo_ref: "main",
        graph_config_path: "langgraph.json",
        image_uri: null,
        source_tarball_path: null,
        repo_commit_sha: d.source_revision_config.repo_commit_sha,
      });
      const listed = (await api.call("GET", `/v2/deployments/${d.id}/revisions`)).body.resources[0];
      expect(Object.keys(listed.source_revision_config)).toEqual(Object.keys(d.source_revision_config));
    }));

  it("skips the build states for container sources", () =>
    withServer(async (api, clock) => {
      const body = {
        name: "img",
        source: "internal_container",
        source_config: {},
        source_revision_config: { image_uri: "r/x:1" },
        secrets: [],
      };
      const d = (await api.call("POST", "/v2/deployments", body)).body;
      const seen: string[] = [];
      for (let i = 0; i < 4; i++, clock.advance(1))
        seen.push(await statusOf(api, d.id, d.latest_revision_id));
      expect(seen).toEqual(["CREATING", "AWAITING_DEPLOY", "DEPLOYING", "DEPLOYED"]);
    }));

  it("marks a revision SKIPPED when superseded before DEPLOYING; active is the last DEPLOYED", () =>
    withServer(async (api, clock) => {
      const d = (await api.call("POST", "/v2/deployments", gitrepo("skips"))).body;
      clock.advance(7);
      const first = d.latest_revision_id;
      const second = (await api.call("PATCH", `/v2/deployments/${d.id}`, { secrets: [] })).body
        .latest_revision_id;
      clock.advance(2);
      const third = (await api.call("PATCH", `/v2/deployments/${d.id}`, { secrets: [] })).body;
      expect(await statusOf(api, d.id, second)).toBe("SKIPPED");
      expect(third.active_revision_id).toBe(first);
      expect(third.latest_revision_id).not.toBe(first);
      clock.advance(5);
      // a revision already DEPLOYING is not skipped
      const fourth = (await api.call("PATCH", `/v2/deployments/${d.id}`, { secrets: [] })).body;
      clock.advance(10);
      expect(await statusOf(api, d.id, third.latest_revision_id)).toBe("DEPLOYED");
      const now = (await api.call("GET", `/v2/deployments/${d.id}`)).body;
      expect(now.active_revision_id).toBe(fourth.latest_revision_id);
      const skipped = (await api.call("GET", `/v2/deployments/${d.id}/revisions/${second}`)).body;
      expect(skipped.status_message).toContain(third.latest_revision_id);
    }));

  it("forces failures from fail-create, fail-build and fail-deploy markers", () =>
    withServer(
      async (api) => {
        const expected = {
          "fail-create": "CREATE_FAILED",
          "fail-build": "BUILD_FAILED",
          "fail-deploy": "DEPLOY_FAILED",
        };
        for (const [marker, status] of Object.entries(expected)) {
          const d = (
            await api.call(
              "POST",
              "/v2/deployments",
              gitrepo(marker, {
                source_revision_config: { repo_ref: `feature/${marker}`, graph_config_path: "g.json" },
              }),
            )
          ).body;
          const revision = (
            await api.call("GET", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)
          ).body;
          expect(revision).toMatchObject({ status, status_message: expect.stringContaining(marker) });
          expect((await api.call("GET", `/v2/deployments/${d.id}`)).body.active_revision_id).toBeNull();
        }
      },
      { revisionSeconds: 0 },
    ));

  // A deployment being deleted deploys nothing more: its revision in progress ends INTERRUPTED when
  // the DELETE is taken (it went on to DEPLOYED, so a client polling it saw a success for a
  // deployment on its way out); revisions already ended keep their status. docs/control-plane.md.
  it("interrupts the revision in progress when its deployment is deleted", () =>
    withServer(
      async (api, clock) => {
        const d = (await api.call("POST", "/v2/deployments", gitrepo("going"))).body;
        clock.advance(7);
        const first = d.latest_revision_id;
        const second = (await api.call("PATCH", `/v2/deployments/${d.id}`, { secrets: [] })).body
          .latest_revision_id;
        clock.advance(3);
        expect(await statusOf(api, d.id, second)).toBe("BUILDING");
        expect((await api.call("DELETE", `/v2/deployments/${d.id}`)).status).toBe(204);
        clock.advance(10);
        const revision = (await api.call("GET", `/v2/deployments/${d.id}/revisions/${second}`)).body;
        expect(revision).toMatchObject({
          status: "INTERRUPTED",
          status_message: expect.stringContaining("deleted"),
        });
        expect(await statusOf(api, d.id, first)).toBe("DEPLOYED");
        const gone = (await api.call("GET", `/v2/deployments/${d.id}`)).body;
        expect(gone).toMatchObject({ status: "AWAITING_DELETE", active_revision_id: first });
      },
      { deploymentReadySeconds: 60 },
    ));

  it("answers 404 for an unknown revision and pages revisions newest first", () =>
    withServer(async (api) => {
      const d = (await api.call("POST", "/v2/deployments", gitrepo("pages"))).body;
      for (let i = 0; i < 3; i++) await api.call("PATCH", `/v2/deployments/${d.id}`, { secrets: [] });
      const page = (await api.call("GET", `/v2/deployments/${d.id}/revisions?limit=1`)).body;
      expect(page.offset).toBe(1);
      expect(page.resources).toHaveLength(1);
      const rid = "00000000-0000-4000-8000-0000000000ff";
      expect((await api.call("GET", `/v2/deployments/${d.id}/revisions/${rid}`)).status).toBe(404);
    }));
});

describe("build on push (spec 3.2)", () => {
  const REPO = "https://git.example.com/acme/agent";
  const tracked = (name: string, ref: string, buildOnPush: boolean | null, repo = REPO) =>
    gitrepo(name, {
      source_config: { ...gitrepo(name).source_config, repo_url: repo, build_on_push: buildOnPush },
      source_revision_config: { repo_ref: ref, graph_config_path: "langgraph.json" },
    });

  it("builds a revision of each deployment that tracks the pushed branch with build_on_push", () =>
    withServer(async (api) => {
      type Created = { id: string; name: string; latest_revision_id: string };
      const create = async (body: object): Promise<Created> =>
        (await api.call("POST", "/v2/deployments", body)).body as Created;
      const main = await create(tracked("main-push", "main", true));
      const others = [
        await create(tracked("main-no-push", "main", null)),
        await create(tracked("dev-push", "dev", true)),
        await create(tracked("elsewhere", "main", true, "https://git.example.com/acme/other")),
        await create(tracked("tagged", "refs/tags/main", false)),
      ];
      const sha = "a".repeat(40);
      const push = (body: object) => api.call("POST", "/v1/integrations/gitrepo/push", body);
      const pushed = await push({ repo_url: REPO, ref: "refs/heads/main", commit_sha: sha });
      expect(pushed.status).toBe(200);
      expect(pushed.body.revisions).toHaveLength(1);
      const built = pushed.body.revisions[0].revision_id;
      expect(pushed.body.revisions[0]).toEqual({ deployment_id: main.id, revision_id: built });
      const after = (await api.call("GET", `/v2/deployments/${main.id}`)).body;
      expect(after.latest_revision_id).toBe(built);
      expect(after.source_revision_config.repo_commit_sha).toBe(sha);
      const revision = (await api.call("GET", `/v2/deployments/${main.id}/revisions/${built}`)).body;
      expect(revision).toMatchObject({
        status: "CREATING",
        source_revision_config: { repo_commit_sha: sha },
      });
      expect(await statusOf(api, main.id, main.latest_revision_id)).toBe("SKIPPED");
      for (const other of others) {
        const now = (await api.call("GET", `/v2/deployments/${other.id}`)).body;
        expect(now.latest_revision_id, other.name).toBe(other.latest_revision_id);
      }
      const bare = await push({ repo_url: REPO, ref: "main" });
      expect(bare.body.revisions.map((r: { deployment_id: string }) => r.deployment_id)).toEqual([main.id]);
      expect((await push({ repo_url: REPO, ref: "refs/tags/main" })).body).toEqual({ revisions: [] });
      const bad = await push({ repo_url: REPO, ref: "main", commit_sha: "HEAD" });
      expect(bad.status).toBe(422);
      expect(bad.body.detail[0].loc).toEqual(["body", "commit_sha"]);
    }));
});

describe("build on push, with --data", () => {
  it("keeps the revision a push built across a restart", async () => {
    const dataDir = await mkdtemp(join(tmpdir(), "plumb-cp-push-"));
    try {
      let api = await start({ dataDir });
      const body = gitrepo("pushed", {
        source_config: { ...gitrepo("pushed").source_config, build_on_push: true },
      });
      const d = (await api.call("POST", "/v2/deployments", body)).body as { id: string };
      const pushed = await api.call("POST", "/v1/integrations/gitrepo/push", {
        repo_url: body.source_config.repo_url,
        ref: "main",
        commit_sha: "b".repeat(40),
      });
      const built = (pushed.body as { revisions: Array<{ revision_id: string }> }).revisions[0]?.revision_id;
      expect(built).toBeDefined();
      await api.cp.stop();
      api = await start({ dataDir });
      try {
        const after = (await api.call("GET", `/v2/deployments/${d.id}`)).body;
        expect(after.latest_revision_id).toBe(built);
        expect(after.source_revision_config.repo_commit_sha).toBe("b".repeat(40));
      } finally {
        await api.cp.stop();
      }
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  });
});

describe("quick start, curl style", () => {
  it("create → poll until DEPLOYED → patch → new revision → DEPLOYED", async () => {
    const api = await start({ revisionSeconds: 0.02 });
    try {
      const poll = async (id: string, rid: string) => {
        for (let i = 0; i < 200; i++) {
          const status = await statusOf(api, id, rid);
          if (status === "DEPLOYED") return status;
          await new Promise((r) => setTimeout(r, 10));
        }
        throw new Error("never DEPLOYED");
      };
      const d = (await api.call("POST", "/v2/deployments", gitrepo("quick-start"))).body;
      expect((await api.call("GET", `/v2/deployments/${d.id}`)).status).toBe(200);
      expect(await poll(d.id, d.latest_revision_id)).toBe("DEPLOYED");
      const patched = (
        await api.call("PATCH", `/v2/deployments/${d.id}`, { source_revision_config: { repo_ref: "v2" } })
      ).body;
      expect(patched.latest_revision_id).not.toBe(d.latest_revision_id);
      expect(await poll(d.id, patched.latest_revision_id)).toBe("DEPLOYED");
      expect((await api.call("GET", `/v2/deployments/${d.id}`)).body.active_revision_id).toBe(
        patched.latest_revision_id,
      );
    } finally {
      await api.cp.stop();
    }
  });
});

describe("source uploads", () => {
  it("issues an upload URL, takes the PUT, and accepts only issued and uploaded object paths", async () => {
    const api = await start();
    try {
      const body = {
        name: "src",
        source: "internal_source",
        source_config: {},
        source_revision_config: { graph_config_path: "g.json" },
        secrets: [],
      };
      const d = (await api.call("POST", "/v2/deployments", body)).body;
      const first = (await api.call("GET", `/v2/deployments/${d.id}/revisions/${d.latest_revision_id}`)).body;
      expect(first).toMatchObject({
        status: "BUILD_FAILED",
        status_message: expect.stringContaining("upload-url"),
      });
      const arbitrary = await api.call("PATCH", `/v2/deployments/${d.id}`, {
        source_revision_config: { source_tarball_path: "uploads/x.tar.gz" },
      });
      expect(arbitrary.status).toBe(400);
      const issued = (await api.call("POST", `/v2/deployments/${d.id}/upload-url`)).body;
      expect(issued.upload_url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/uploads\/[0-9a-f]+$/);
      const early = await api.call("PATCH", `/v2/deployments/${d.id}`, {
        source_revision_config: { source_tarball_path: issued.object_path },
      });
      expect(early.body.detail).toContain("PUT");
      const notGzip = await fetch(issued.upload_url, { method: "PUT", body: "plain text" });
      expect(notGzip.status).toBe(400);
      const put = await fetch(issued.upload_url, {
        method: "PUT",
        body: gzipSync("tar"),
        headers: { "content-type": "application/gzip" },
      });
      expect(put.status).toBe(200);
      const patched = await api.call("PATCH", `/v2/deployments/${d.id}`, {
        source_revision_config: { source_tarball_path: issued.object_path },
      });
      expect(patched.status).toBe(200);
      expect(
        (await api.call("GET", `/v2/deployments/${d.id}/revisions/${patched.body.latest_revision_id}`)).body
          .status,
      ).toBe("DEPLOYED");
      expect((await api.call("POST", `/deployments/${d.id}/upload-url`)).status).toBe(200);
      expect(
        (await fetch(`${api.cp.url}/uploads/deadbeef`, { method: "PUT", body: gzipSync("x") })).status,
      ).toBe(404);
    } finally {
      await api.cp.stop();
    }
  });
});
