import { describe, expect, it } from "vitest";
import { formatDeployment, type DeploymentRecord } from "../../src/control-plane/deployments/record.js";
import { createDeploymentRenderer } from "../../src/control-plane/deployments/render.js";
import { gitrepo, ManualClock, start } from "./helpers.js";

// GET answers reuse the JSON of a deployment's stored part per record version: they must never
// be stale (same millisecond, time passing, delete) and must equal the formatted object.

describe("cached deployment JSON", () => {
  it("sees every change, even two PATCHes in the same millisecond on a frozen clock", async () => {
    const clock = new ManualClock();
    const api = await start({ clock, revisionSeconds: 1, deploymentReadySeconds: 2 });
    try {
      const created = (await api.call("POST", "/v2/deployments", gitrepo("same-ms"))).body;
      const path = `/v2/deployments/${created.id}`;
      expect((await api.call("GET", path)).body).toEqual(created);
      for (const command of ["npm ci", "pnpm i", "yarn"]) {
        const patched = await api.call("PATCH", path, { source_config: { install_command: command } });
        expect(patched.body.source_config.install_command).toBe(command);
        const got = (await api.call("GET", path)).body;
        expect(got).toEqual(patched.body);
        expect(got.updated_at).toBe(created.updated_at); // the clock did not move
      }
      const revised = (await api.call("PATCH", path, { source_revision_config: { repo_ref: "v2" } })).body;
      expect(revised.latest_revision_id).not.toBe(created.latest_revision_id);
      expect((await api.call("GET", path)).body.source_revision_config.repo_ref).toBe("v2");

      // Time alone changes status and the active revision; the cached part is not frozen with it.
      expect(revised).toMatchObject({ status: "AWAITING_DATABASE", active_revision_id: null });
      clock.advance(60);
      const later = (await api.call("GET", path)).body;
      expect(later).toMatchObject({ status: "READY", active_revision_id: revised.latest_revision_id });
      const listed = (await api.call("GET", "/v2/deployments?name_contains=same-ms")).body;
      expect(listed.resources).toEqual([later]);

      expect((await api.call("DELETE", path)).status).toBe(204);
      expect((await api.call("GET", path)).body.status).toBe("AWAITING_DELETE");
    } finally {
      await api.cp.stop();
    }
  });

  it("renders exactly JSON.stringify(formatDeployment(...)) as time passes", () => {
    const clock = new ManualClock();
    const timing = { revisionMs: 1000, readyMs: 3000 };
    const record: DeploymentRecord = {
      id: "3f1e2d4c-0000-4000-8000-000000000001",
      tenantId: "t",
      name: 'n"quoted\u2028',
      source: "external_container",
      sourceConfig: { listener_config: { k8s_namespace: "a" }, custom_url: "https://x" },
      sourceRevisionConfig: { image_uri: "img:fail-deploy" },
      secretNames: ["A", "B"],
      secretReferences: [{ name: "C", secret_name: "s", secret_key: "k" }],
      createdAt: clock.t,
      updatedAt: clock.t,
      revisions: [
        { id: "r1", source: "external_container", createdAt: clock.t, config: {} },
        {
          id: "r2",
          source: "external_container",
          createdAt: clock.t + 500,
          config: {},
          failure: { status: "DEPLOY_FAILED", message: "m" },
        },
      ],
      uploads: [],
    };
    let version = 1;
    const renderer = createDeploymentRenderer(
      timing,
      () => "http://h:1",
      () => version,
    );
    for (let ms = 0; ms <= 8000; ms += 250) {
      const now = clock.t + ms;
      expect(renderer.render(record, now)).toBe(
        JSON.stringify(formatDeployment(record, now, timing, "http://h:1")),
      );
    }
    record.secretNames = ["Z"];
    version++;
    expect(JSON.parse(renderer.render(record, clock.t)).secrets).toEqual([{ name: "Z", value: "********" }]);
    expect(JSON.parse(renderer.renderPage([record, record], clock.t, 7))).toMatchObject({
      resources: [{ name: record.name }, { name: record.name }],
      offset: 7,
    });
  });

  it("pages past deleted deployments and a name filter, stopping once the page is full", async () => {
    const clock = new ManualClock();
    const api = await start({ clock, deploymentReadySeconds: 1 });
    try {
      const ids: string[] = [];
      for (let i = 0; i < 8; i++)
        ids.push(
          (await api.call("POST", "/v2/deployments", gitrepo(`${i % 2 ? "odd" : "even"}-${i}`))).body.id,
        );
      await api.call("DELETE", `/v2/deployments/${ids[1]}`);
      await api.call("DELETE", `/v2/deployments/${ids[3]}`);
      clock.advance(2); // both deletions complete
      const names = async (query: string) => {
        const body = (await api.call("GET", `/v2/deployments?${query}`)).body;
        return { names: body.resources.map((r: { name: string }) => r.name), offset: body.offset };
      };
      expect(await names("name_contains=odd")).toEqual({ names: ["odd-5", "odd-7"], offset: 2 });
      expect(await names("limit=3&offset=1")).toEqual({ names: ["even-2", "even-4", "odd-5"], offset: 4 });
      expect(await names("limit=3&offset=4")).toEqual({ names: ["even-6", "odd-7"], offset: 6 });
      expect(await names("offset=9")).toEqual({ names: [], offset: 9 });
    } finally {
      await api.cp.stop();
    }
  });
});
