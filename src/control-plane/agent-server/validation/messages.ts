import { randomUUID } from "node:crypto";
import type { MessageType, StateMessage } from "../types.js";
import { dictIssue, isObject, type ValidationIssue } from "./body-fields.js";

// The messages of an input: roles read as message types, each message checked where it sits.

const ROLE_TO_TYPE: Record<string, MessageType> = {
  user: "human",
  human: "human",
  assistant: "ai",
  ai: "ai",
  system: "system",
  tool: "tool",
};

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
