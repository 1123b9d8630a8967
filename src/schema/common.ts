import { type TSchema, Type } from "@sinclair/typebox";

/** `T | null` — the control plane marks almost every field nullable; null means "leave unchanged". */
export const Nullable = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description ? { description } : {});

/** Deployment names: a letter first, then letters, digits and '-', at most 63 characters. */
export const DEPLOYMENT_NAME_PATTERN = "^[A-Za-z][A-Za-z0-9-]{0,62}$";
/** RFC 1123 DNS label (container and volume names). */
export const DNS_LABEL_PATTERN = "^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$";
/** C identifier (environment variable and secret names). */
export const C_IDENTIFIER_PATTERN = "^[A-Za-z_][A-Za-z0-9_]*$";
export const UUID_PATTERN = "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$";

export const Uuid = (description: string) => Type.String({ pattern: UUID_PATTERN, description });
export const FreeForm = (description: string) =>
  Nullable(Type.Record(Type.String(), Type.Unknown()), description);
export const StringMap = (description: string) =>
  Nullable(Type.Record(Type.String(), Type.String()), description);
