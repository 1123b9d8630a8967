import { randomUUID } from "node:crypto";
import { bodyUuid } from "../http/uuid.js";
import {
  MULTITASK_STRATEGIES,
  type MessageType,
  type MultitaskStrategy,
  type StateMessage,
} from "./types.js";
import { parseRunOptions, type RunOptions } from "./runs/run-options.js";

/** One entry of an HTTPValidationError (spec 2.6). */
export type ValidationIssue = { loc: Array<string | number>; msg: string; type: string };

export type Parsed<T> = { ok: true; value: T } | { ok: false; issues: ValidationIssue[] };

export type ThreadCreateBody = {
  metadata: Record<string, unknown>;
  thread_id: string | null;
  if_exists: "raise" | "do_nothing";
};

const STREAM_MODES = [
  "values",
  "updates",
  "messages",
  "messages-tuple",
  "events",
  "debug",
  "custom",
  "tasks",
  "checkpoints",
] as const;
export type StreamMode = (typeof STREAM_MODES)[number];

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

const ROLE_TO_TYPE: Record<string, MessageType> = {
  user: "human",
  human: "human",
  assistant: "ai",
  ai: "ai",
  system: "system",
  tool: "tool",
};

export const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

/**
 * A search body's `limit` (1-1,000; absent or null: `fallback`) and `offset` (≥ 0; absent or null:
 * 0), refused with the open-source server's messages otherwise (thread search, the store's searches).
 */
export function pageParams(body: Record<string, unknown>, fallback: number, issues: ValidationIssue[]) {
  const limit = limitParam(body, fallback, issues);
  const offset = body.offset ?? 0;
  if (typeof offset !== "number" || !Number.isInteger(offset) || offset < 0)
    issues.push({
      loc: ["body", "offset"],
      msg: "Input should be a non-negative integer",
      type: "int_parsing",
    });
  return { limit, offset: offset as number };
}

/** A body's `limit` (1-1,000; absent or null: `fallback`), refused with the open-source server's message. */
export function limitParam(
  body: Record<string, unknown>,
  fallback: number,
  issues: ValidationIssue[],
): number {
  const limit = body.limit ?? fallback;
  if (typeof limit !== "number" || !Number.isInteger(limit) || limit < 1 || limit > 1000)
    issues.push({
      loc: ["body", "limit"],
      msg: "Input should be an integer from 1 to 1000",
      type: "int_parsing",
    });
  return limit as number;
}

export const dictIssue = (loc: ValidationIssue["loc"]): ValidationIssue => ({
  loc,
  msg: "Input should be a valid dictionary",
  type: "dict_type",
});

export function optionalEnum<T extends string>(
  body: Record<string, unknown>,
  field: string,
  allowed: readonly T[],
  fallback: T,
  issues: ValidationIssue[],
): T {
  const value = body[field];
  if (value === undefined || value === null) return fallback;
  if (typeof value === "string" && (allowed as readonly string[]).includes(value)) return value as T;
  issues.push({
    loc: ["body", field],
    msg: `Input should be ${allowed.map((a) => `'${a}'`).join(", ")}`,
    type: "enum",
  });
  return fallback;
}

export function optionalMetadata(
  body: Record<string, unknown>,
  issues: ValidationIssue[],
): Record<string, unknown> {
  const value = body.metadata;
  if (value === undefined || value === null) return {};
  if (isObject(value)) return value;
  issues.push(dictIssue(["body", "metadata"]));
  return {};
}

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

/** The `messages` of an input (or of a command's update); `at` is where it sits in the body. */
export function parseMessages(
  input: unknown,
  issues: ValidationIssue[],
  at: ValidationIssue["loc"] = ["body", "input"],
): StateMessage[] {
  if (input === undefined || input === null) return [];
  if (!isObject(input)) {
    issues.push(dictIssue(at));
    return [];
  }
  const messages = input.messages;
  if (messages === undefined || messages === null) return [];
  if (!Array.isArray(messages)) {
    issues.push({
      loc: [...at, "messages"],
      msg: "Input should be a valid list",
      type: "list_type",
    });
    return [];
  }
  const parsed: StateMessage[] = [];
  messages.forEach((raw: unknown, index) => {
    const loc = [...at, "messages", index];
    if (!isObject(raw)) return issues.push(dictIssue(loc));
    const role = raw.role ?? raw.type;
    const type = typeof role === "string" ? ROLE_TO_TYPE[role] : undefined;
    if (type === undefined) {
      issues.push({
        loc: [...loc, "role"],
        msg: "Input should be a message role: 'user', 'human', 'assistant', 'ai', 'system' or 'tool'",
        type: "enum",
      });
    }
    const content = raw.content;
    if (typeof content !== "string" && !Array.isArray(content)) {
      issues.push({
        loc: [...loc, "content"],
        msg: "Input should be a string or a list of blocks",
        type: "string_type",
      });
    }
    const id = typeof raw.id === "string" && raw.id !== "" ? raw.id : randomUUID();
    if (type !== undefined) parsed.push({ type, content, id });
  });
  return parsed;
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

/** A stream mode or a list of them (body or repeated query parameter); undefined when absent. */
export function parseStreamModes(
  raw: unknown,
  loc: ValidationIssue["loc"],
  issues: ValidationIssue[],
): StreamMode[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const list = Array.isArray(raw) ? (raw as unknown[]) : [raw];
  const modes: StreamMode[] = [];
  for (const [index, mode] of list.entries()) {
    if (typeof mode === "string" && (STREAM_MODES as readonly string[]).includes(mode)) {
      if (!modes.includes(mode as StreamMode)) modes.push(mode as StreamMode);
    } else {
      issues.push({
        loc: Array.isArray(raw) ? [...loc, index] : loc,
        msg: `Input should be ${STREAM_MODES.map((m) => `'${m}'`).join(", ")}`,
        type: "enum",
      });
    }
  }
  return modes;
}
