import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Api, container, start } from "./helpers.js";

// The words of a 422's issues, as pydantic v2 writes them (spec 2.6's HTTPValidationError is
// FastAPI's): a length bound in the singular for 1 ("at least 1 character", not "character(s)"), an
// enum's choices with "or" before the last, a list bound "after validation, not N", and each bound
// of a constrained string its own type.

let api: Api;
beforeAll(async () => {
  api = await start({ mode: "self-hosted" });
});
afterAll(async () => api.cp.stop());

const org = "/api/v1/orgs/current";

describe("pydantic's messages", () => {
  it("says a length bound of 1 in the singular", async () => {
    const answer = await api.call(
      "POST",
      "/v2/deployments",
      container("short-image", {
        source_config: {
          listener_id: "10000000-0000-4000-8000-000000000001",
          resource_spec: { sidecars: [{ name: "side", image: "" }], image_pull_secrets: [{ name: "" }] },
        },
      }),
    );
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toEqual([
      {
        loc: ["body", "source_config", "resource_spec", "image_pull_secrets", 0, "name"],
        msg: "String should have at least 1 character",
        type: "string_too_short",
      },
      {
        loc: ["body", "source_config", "resource_spec", "sidecars", 0, "image"],
        msg: "String should have at least 1 character",
        type: "string_too_short",
      },
    ]);
  });

  it("lists an enum's choices with 'or' before the last", async () => {
    const answer = await api.call("POST", `${org}/invites`, { email: "ann@example.com", org_role: "Boss" });
    expect(answer).toMatchObject({
      status: 422,
      body: {
        detail: [
          {
            loc: ["body", "org_role"],
            msg: "Input should be 'Organization Admin', 'Organization User' or 'Organization Viewer'",
            type: "enum",
          },
        ],
      },
    });
  });

  it.each([
    ["x", { msg: "Input should be a valid list", type: "list_type" }],
    [[], { msg: "List should have at least 1 item after validation, not 0", type: "too_short" }],
  ])("default_workspaces %j: %j", async (value, issue) => {
    const answer = await api.call("PATCH", `${org}/sso-settings`, { default_workspaces: value });
    expect(answer).toMatchObject({
      status: 422,
      body: { detail: [{ loc: ["body", "default_workspaces"], ...issue }] },
    });
  });

  it("tells each bound of a workspace name apart", async () => {
    const answer = await api.call("PATCH", `${org}/sso-settings`, {
      default_workspaces: [5, " ", "w".repeat(129), "ok"],
    });
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toEqual([
      { loc: ["body", "default_workspaces", 0], msg: "Input should be a valid string", type: "string_type" },
      {
        loc: ["body", "default_workspaces", 1],
        msg: "String should have at least 1 character",
        type: "string_too_short",
      },
      {
        loc: ["body", "default_workspaces", 2],
        msg: "String should have at most 128 characters",
        type: "string_too_long",
      },
    ]);
  });

  // Our choices where the spec is silent (docs/control-plane.md "Validation and errors"): pydantic's
  // strict mode, nothing coerced; unknown fields refused at every level (extra="forbid").
  it("coerces nothing, and refuses unknown fields at every level", async () => {
    const answer = await api.call(
      "POST",
      "/v2/deployments",
      container("strict", {
        source_config: {
          listener_id: "10000000-0000-4000-8000-000000000001",
          resource_spec: { min_scale: "2", max_scale: 1.5, sidecars: [{ name: "s", image: "i", ports: [] }] },
          build_on_push: "true",
        },
        resource_specs: {},
      }),
    );
    expect(answer.status).toBe(422);
    const issues = answer.body.detail.map((d: { loc: unknown[]; type: string }) => [d.loc.join("."), d.type]);
    expect(issues).toEqual(
      expect.arrayContaining([
        ["body.resource_specs", "extra_forbidden"],
        ["body.source_config.resource_spec.sidecars.0.ports", "extra_forbidden"],
        ["body.source_config.resource_spec.min_scale", "int_type"],
        ["body.source_config.resource_spec.max_scale", "int_type"],
        ["body.source_config.build_on_push", "bool_type"],
      ]),
    );
    expect(issues).toHaveLength(5);
  });

  it("reads an invite id as a uuid path parameter", async () => {
    const invite = await api.call("POST", `${org}/invites`, { email: "uuid-path@example.com" });
    expect(invite.status).toBe(201);
    expect(await api.call("DELETE", `${org}/invites/not-a-uuid`)).toMatchObject({
      status: 422,
      body: {
        detail: [{ loc: ["path", "invite_id"], msg: "Input should be a valid UUID", type: "uuid_parsing" }],
      },
    });
    const upper = (invite.body.id as string).toUpperCase();
    expect((await api.call("DELETE", `${org}/invites/${upper}`)).status).toBe(204);
    expect((await api.call("GET", `${org}/invites`)).body).toEqual([]);
  });
});
