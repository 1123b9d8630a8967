import { shapeCheck } from "../../schema/validators.js";

// What every call of the client shares: the checks of its answers, an id as a path segment.

// The answers' checks, compiled at build time (schema/validators.ts).
export const shapes = {
  deployment: shapeCheck("Deployment"),
  deploymentPage: shapeCheck("DeploymentPage"),
  revision: shapeCheck("Revision"),
  revisionPage: shapeCheck("RevisionPage"),
  listenerPage: shapeCheck("ListenerPage"),
  integrationList: shapeCheck("IntegrationList"),
  uploadUrl: shapeCheck("UploadUrl"),
};

export const id = (value: string) => encodeURIComponent(value);
