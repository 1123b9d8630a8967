import { describe, expect, it } from "vitest";
import { refuseEnvironments } from "../../../src/controller/snapshot/refuse-environments.js";
import { checkFiles, VALID_DEPLOYMENT } from "../../manifest/helpers.js";

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
const DEPLOYMENT = VALID_DEPLOYMENT;

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
