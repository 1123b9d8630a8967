import { describe, expect, it } from "vitest";
import { refuseEnvironments } from "../../../src/controller/snapshot/refuse-environments.js";
import { checkFiles } from "../../manifest/helpers.js";

// A controller started without environments: a tree that defines them later fails the scan rather
// than sending every deployment's base spec to the one control plane it knows.

const ENVIRONMENT = `apiVersion: plumb/v1
kind: Environment
metadata:
  name: prod
spec:
  api_url: http://127.0.0.1:8123
  api_key: {env: KEY}
`;
const DEPLOYMENT = `apiVersion: plumb/v1
kind: Deployment
metadata:
  name: a
spec:
  source: external_container
  source_config: {listener_id: 10000000-0000-4000-8000-000000000001}
  source_revision_config: {image_uri: "img:1"}
`;

describe("the controller and environments", () => {
  it("passes a tree without environments through unchanged", () => {
    const tree = checkFiles({ "a.yaml": DEPLOYMENT });
    expect(refuseEnvironments(tree)).toBe(tree);
  });

  it("refuses a tree that defines environments", () => {
    expect(() => refuseEnvironments(checkFiles({ "e.yaml": ENVIRONMENT, "a.yaml": DEPLOYMENT }))).toThrow(
      /now define environments \(prod\); restart the controller/,
    );
  });

  it("refuses a Deployment naming environments even when the Environment documents did not come back", () => {
    const tree = checkFiles({ "e.yaml": ENVIRONMENT, "a.yaml": `${DEPLOYMENT}environments: {prod: {}}\n` });
    expect(() => refuseEnvironments({ ...tree, environments: undefined })).toThrow(
      /a\.yaml: the manifests now define environments/,
    );
  });
});
