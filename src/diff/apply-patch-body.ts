// Moved to src/schema/revision-fields.ts (the API client needs it too); kept for old importers.
export { createsRevision } from "../schema/revision-fields.js";
