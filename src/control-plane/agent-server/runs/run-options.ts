import { NODES } from "../graph.js";
import { webhookProblem } from "./webhook.js";
import type { RunCommand, StateMessage } from "../types.js";

/**
 * What a run body says about how the graph runs (docs/control-plane.md "Interrupts"): where it
 * stops (`interrupt_before` / `interrupt_after`, a list of nodes or "*"), how it continues an
 * interrupted thread (`input: null`, `command: {resume, update, goto}`), the checkpoint it forks
 * from (`checkpoint_id` or `checkpoint: {checkpoint_id}`), and the fields kept as its `kwargs`.
 */

type Issue = { loc: Array<string | number>; msg: string; type: string };
type MessagesParser = (input: unknown, issues: Issue[], at: Issue["loc"]) => StateMessage[];

export type RunOptions = {
  continues: boolean;
  command: RunCommand | undefined;
  interrupt_before: string[] | undefined;
  interrupt_after: string[] | undefined;
  fork_from: string | undefined;
  /** Seconds to wait before the run may start (after_seconds). */
  after_seconds: number;
  kwargs: Record<string, unknown>;
};

/** Fields of the request kept in the run's `kwargs`, as the open-source server keeps them. */
const KWARGS = [
  "input",
  "command",
  "config",
  "context",
  "stream_mode",
  "interrupt_before",
  "interrupt_after",
  "webhook",
  "feedback_keys",
  "temporary",
  "subgraphs",
  "resumable",
  "checkpoint_during",
  "durability",
  "after_seconds",
] as const;

/** The longest after_seconds accepted: a day. */
const MAX_DELAY_SECONDS = 86_400;

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function nodeList(raw: unknown, field: string, issues: Issue[]): string[] | undefined {
  if (raw === undefined || raw === null) return undefined;
  if (raw === "*") return ["*"];
  if (Array.isArray(raw) && raw.every((node) => typeof node === "string")) return raw;
  issues.push({
    loc: ["body", field],
    msg: 'Input should be "*" or a list of node names',
    type: "list_type",
  });
  return undefined;
}

function parseCommand(raw: unknown, issues: Issue[], parseMessages: MessagesParser) {
  if (raw === undefined || raw === null) return undefined;
  if (!isObject(raw)) {
    issues.push({ loc: ["body", "command"], msg: "Input should be a valid dictionary", type: "dict_type" });
    return undefined;
  }
  const command: RunCommand = {};
  if ("resume" in raw && raw.resume !== undefined) command.resume = { value: raw.resume };
  if (raw.update !== undefined && raw.update !== null)
    command.update = parseMessages(raw.update, issues, ["body", "command", "update"]);
  if (raw.goto !== undefined && raw.goto !== null) {
    const goto = raw.goto;
    if (typeof goto === "string" && (NODES as readonly string[]).includes(goto)) command.goto = goto;
    else
      issues.push({
        loc: ["body", "command", "goto"],
        msg: `Input should be a node of the graph: ${NODES.map((n) => `'${n}'`).join(", ")}`,
        type: "enum",
      });
  }
  return command;
}

function forkPoint(body: Record<string, unknown>, issues: Issue[]): string | undefined {
  const nested = isObject(body.checkpoint) ? body.checkpoint.checkpoint_id : undefined;
  const id = body.checkpoint_id ?? nested;
  if (id === undefined || id === null) return undefined;
  if (typeof id === "string") return id;
  issues.push({
    loc: ["body", "checkpoint_id"],
    msg: "Input should be a checkpoint id",
    type: "string_type",
  });
  return undefined;
}

function checkWebhook(raw: unknown, issues: Issue[], allowHosts: readonly string[]): void {
  const problem = raw === undefined || raw === null ? undefined : webhookProblem(raw, allowHosts);
  if (problem !== undefined) issues.push({ loc: ["body", "webhook"], msg: problem, type: "url_parsing" });
}

function delay(raw: unknown, issues: Issue[]): number {
  if (raw === undefined || raw === null) return 0;
  if (typeof raw === "number" && Number.isFinite(raw) && raw >= 0 && raw <= MAX_DELAY_SECONDS) return raw;
  issues.push({
    loc: ["body", "after_seconds"],
    msg: `Input should be a number of seconds from 0 to ${MAX_DELAY_SECONDS}`,
    type: "float_parsing",
  });
  return 0;
}

export function parseRunOptions(
  body: Record<string, unknown>,
  issues: Issue[],
  parseMessages: MessagesParser,
  webhookHosts: readonly string[] = [],
): RunOptions {
  checkWebhook(body.webhook, issues, webhookHosts);
  const kwargs: Record<string, unknown> = {};
  for (const field of KWARGS) if (body[field] !== undefined) kwargs[field] = body[field];
  return {
    continues: body.input === undefined || body.input === null,
    command: parseCommand(body.command, issues, parseMessages),
    interrupt_before: nodeList(body.interrupt_before, "interrupt_before", issues),
    interrupt_after: nodeList(body.interrupt_after, "interrupt_after", issues),
    fork_from: forkPoint(body, issues),
    after_seconds: delay(body.after_seconds, issues),
    kwargs,
  };
}

/** Whether a breakpoint list stops at the node. */
export const stopsAt = (nodes: readonly string[] | undefined, node: string): boolean =>
  nodes !== undefined && (nodes.includes("*") || nodes.includes(node));
