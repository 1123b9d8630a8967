import { type Static, Type } from "@sinclair/typebox";

// Response shapes the clients check that src/schema/ does not already define (decisions.md,
// "Other endpoints" and "Agent server"). Only the fields plumb reads are required. They are
// compiled at build time (scripts/validators-module.ts); the clients check answers with the
// compiled functions (schema/validators.ts) and import this module for its types only.

export const Listener = Type.Object({
  id: Type.String(),
  compute_type: Type.String(),
  compute_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type Listener = Static<typeof Listener>;

export const Integration = Type.Object({
  id: Type.String(),
  installation_id: Type.Optional(Type.Unknown()),
  name: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
export type Integration = Static<typeof Integration>;

/** The values a run's join answers: any object. */
export const JoinValues = Type.Record(Type.String(), Type.Unknown());

export const UploadUrl = Type.Object({ upload_url: Type.String(), object_path: Type.String() });
export type UploadUrl = Static<typeof UploadUrl>;

export const Thread = Type.Object({ thread_id: Type.String() });
export type Thread = Static<typeof Thread>;

export const Run = Type.Object({
  run_id: Type.String(),
  thread_id: Type.String(),
  status: Type.String(),
  assistant_id: Type.Optional(Type.String()),
  multitask_strategy: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  created_at: Type.Optional(Type.String()),
});
export type Run = Static<typeof Run>;

const Message = Type.Object({
  type: Type.String(),
  content: Type.Unknown(),
  id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
});
type Message = Static<typeof Message>;

export const ThreadState = Type.Object({
  values: Type.Object({ messages: Type.Optional(Type.Array(Message)) }),
});
export type ThreadState = Static<typeof ThreadState>;
