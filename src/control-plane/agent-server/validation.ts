import { bodyUuid } from "../http/uuid.js";
import { MULTITASK_STRATEGIES, type MultitaskStrategy, type StateMessage } from "./types.js";
import { parseRunOptions, type RunOptions } from "./runs/run-options.js";
import {
  dictIssue,
  isObject,
  optionalEnum,
  optionalMetadata,
  type Parsed,
  type ValidationIssue,
} from "./validation/body-fields.js";
import { parseMessages } from "./validation/messages.js";
import { parseStreamModes, type StreamMode } from "./validation/stream-modes.js";

export {
  dictIssue,
  isObject,
  limitParam,
  optionalEnum,
  optionalMetadata,
  pageParams,
  type Parsed,
  type ValidationIssue,
} from "./validation/body-fields.js";
export { parseMessages } from "./validation/messages.js";
export { parseStreamModes, type StreamMode } from "./validation/stream-modes.js";

export type ThreadCreateBody = {
  metadata: Record<string, unknown>;
  thread_id: string | null;
  if_exists: "raise" | "do_nothing";
};

export type RunCreateBody = {
  assistant_id: string;
  /** Modes a streamed run sends; `["values"]` when none is given, as the open-source server does. */
  stream_mode: StreamMode[];
  on_disconnect: "cancel" | "continue";
  /** Stateless runs only: whether their temporary thread is deleted when the run ends. */
  on_completion: "delete" | "keep";
  input_messages: StateMessage[];
  /** Interrupts, command, fork point and kwargs (run-options.ts). */
  options: RunOptions;
  multitask_strategy: MultitaskStrategy;
  metadata: Record<string, unknown>;
  if_not_exists: "create" | "reject";
};

/** Body of POST /threads: `{}` or `{metadata}`; `supersteps` is read by state-update.ts, `ttl` is accepted and ignored. */
export function parseThreadCreate(body: unknown): Parsed<ThreadCreateBody> {
  if (body === undefined || body === null) body = {};
  if (!isObject(body)) return { ok: false, issues: [dictIssue(["body"])] };
  const issues: ValidationIssue[] = [];
  const metadata = optionalMetadata(body, issues);
  const threadId = bodyUuid(body.thread_id, ["body", "thread_id"], issues);
  const ifExists = optionalEnum(body, "if_exists", ["raise", "do_nothing"] as const, "raise", issues);
  if (issues.length > 0) return { ok: false, issues };
  return { ok: true, value: { metadata, thread_id: threadId, if_exists: ifExists } };
}

/** Body of POST /threads/{tid}/runs; fields the SDK sends that the simulation does not use are ignored. */
export function parseRunCreate(body: unknown, webhookHosts: readonly string[] = []): Parsed<RunCreateBody> {
  if (!isObject(body)) {
    if (body === undefined || body === null)
      return { ok: false, issues: [{ loc: ["body"], msg: "Field required", type: "missing" }] };
    return { ok: false, issues: [dictIssue(["body"])] };
  }
  const issues: ValidationIssue[] = [];
  const assistantId = body.assistant_id;
  if (assistantId === undefined || assistantId === null) {
    issues.push({ loc: ["body", "assistant_id"], msg: "Field required", type: "missing" });
  } else if (typeof assistantId !== "string") {
    issues.push({
      loc: ["body", "assistant_id"],
      msg: "Input should be a valid string",
      type: "string_type",
    });
  }
  const inputMessages = parseMessages(body.input, issues);
  const strategy = optionalEnum(body, "multitask_strategy", MULTITASK_STRATEGIES, "enqueue", issues);
  const metadata = optionalMetadata(body, issues);
  const ifNotExists = optionalEnum(body, "if_not_exists", ["create", "reject"] as const, "reject", issues);
  const streamMode = parseStreamModes(body.stream_mode, ["body", "stream_mode"], issues) ?? ["values"];
  const onDisconnect = optionalEnum(
    body,
    "on_disconnect",
    ["cancel", "continue"] as const,
    "continue",
    issues,
  );
  const onCompletion = optionalEnum(body, "on_completion", ["delete", "keep"] as const, "delete", issues);
  const options = parseRunOptions(body, issues, parseMessages, webhookHosts);
  if (issues.length > 0) return { ok: false, issues };
  return {
    ok: true,
    value: {
      assistant_id: assistantId as string,
      input_messages: inputMessages,
      options,
      multitask_strategy: strategy,
      metadata,
      if_not_exists: ifNotExists,
      stream_mode: streamMode,
      on_disconnect: onDisconnect,
      on_completion: onCompletion,
    },
  };
}
