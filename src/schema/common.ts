import { type TSchema, Type } from "@sinclair/typebox";

/** `T | null` — the control plane marks almost every field nullable; null means "leave unchanged". */
export const Nullable = <T extends TSchema>(schema: T, description?: string) =>
  Type.Union([schema, Type.Null()], description ? { description } : {});

import { UUID_PATTERN } from "./constants.js";

export {
  C_IDENTIFIER_PATTERN,
  DEPLOYMENT_NAME_PATTERN,
  DNS_LABEL_PATTERN,
  UUID_PATTERN,
} from "./constants.js";

export const Uuid = (description: string) => Type.String({ pattern: UUID_PATTERN, description });
export const FreeForm = (description: string) =>
  Nullable(Type.Record(Type.String(), Type.Unknown()), description);
export const StringMap = (description: string) =>
  Nullable(Type.Record(Type.String(), Type.String()), description);
