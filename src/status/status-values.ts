// The sync and health words of a status record (status-types.ts), apart from its shape
// (status-schema.ts, which needs TypeBox and is read only where the validators are compiled).

export const SYNC_STATUSES = ["Synced", "OutOfSync", "Progressing", "Failed", "Refused", "Unknown"] as const;
export type SyncStatus = (typeof SYNC_STATUSES)[number];
export const HEALTH_STATUSES = ["Healthy", "Progressing", "Degraded", "Unknown"] as const;
export type HealthStatus = (typeof HEALTH_STATUSES)[number];
