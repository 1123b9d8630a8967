import { describe, expect, it } from "vitest";
import { ApiError, codeForStatus, locToField, locToPath } from "../../src/api/errors.js";
import { PlumbError } from "../../src/errors.js";

describe("422 locs", () => {
  it("maps a body loc to a dotted field path", () => {
    expect(locToField(["body", "source_config", "resource_spec", "cpu"])).toBe(
      "source_config.resource_spec.cpu",
    );
    expect(locToPath(["body", "secrets", 0, "name"])).toEqual(["secrets", 0, "name"]);
    expect(locToField(["body", "secrets", 0, "name"])).toBe("secrets.0.name");
    expect(locToField(["query", "limit"])).toBe("limit");
    expect(locToField(["body"])).toBe("");
    expect(locToField(["name"])).toBe("name");
  });

  it("gives field errors and a readable message", () => {
    const error = new ApiError({
      code: "validation",
      status: 422,
      method: "PATCH",
      path: "/v2/deployments/x",
      detail: [
        {
          loc: ["body", "source_config", "resource_spec", "cpu"],
          msg: "must be <= 8",
          type: "less_than_equal",
        },
      ],
    });
    expect(error).toBeInstanceOf(PlumbError);
    expect(error.code).toBe("validation");
    expect(error.fieldErrors()).toEqual([
      {
        field: "source_config.resource_spec.cpu",
        path: ["source_config", "resource_spec", "cpu"],
        message: "must be <= 8",
        type: "less_than_equal",
      },
    ]);
    expect(error.message).toBe(
      "PATCH /v2/deployments/x failed: 422 — source_config.resource_spec.cpu: must be <= 8",
    );
  });

  it("has no field errors for a string detail", () => {
    const error = new ApiError({
      code: "bad-request",
      status: 400,
      method: "PATCH",
      path: "/p",
      detail: "name is immutable",
    });
    expect(error.fieldErrors()).toEqual([]);
    expect(error.message).toContain("name is immutable");
  });
});

describe("codes", () => {
  it("maps statuses", () => {
    expect([400, 401, 403, 404, 409, 422, 429, 500, 503, 418].map(codeForStatus)).toEqual([
      "bad-request",
      "unauthorized",
      "forbidden",
      "not-found",
      "conflict",
      "validation",
      "rate-limited",
      "server-error",
      "server-error",
      "http-error",
    ]);
  });

  it("types network failures with status 0 and a hint", () => {
    const error = new ApiError({
      code: "network",
      status: 0,
      method: "GET",
      path: "/v2/deployments",
      detail: "ECONNREFUSED",
    });
    expect(error.status).toBe(0);
    expect(error.message).toBe(
      "GET /v2/deployments failed: network — ECONNREFUSED (check PLUMB_API_URL and that the server is reachable)",
    );
  });

  it("a timeout's hint asks for no timeout setting: the per-request timeout is none", () => {
    const error = new ApiError({ code: "timeout", status: 0, method: "GET", path: "/v2/deployments" });
    expect(error.message).toBe(
      "GET /v2/deployments failed: timeout (the server did not answer in time; check that it is up and not overloaded, then try again)",
    );
  });
});
