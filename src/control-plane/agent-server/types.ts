/** Records of the simulated agent server. Plain JSON so the whole store snapshots as is. */

export type RunStatus = "pending" | "running" | "success" | "error" | "timeout" | "interrupted";
export type MultitaskStrategy = "reject" | "interrupt" | "rollback" | "enqueue";
export type MessageType = "human" | "ai" | "system" | "tool";

export const RUN_STATUSES: readonly RunStatus[] = [
  "pending",
  "running",
  "success",
  "error",
  "timeout",
  "interrupted",
];
export const MULTITASK_STRATEGIES: readonly MultitaskStrategy[] = [
  "reject",
  "interrupt",
  "rollback",
  "enqueue",
];

export type StateMessage = { type: MessageType; content: unknown; id: string };

/** A message in a thread's state, tagged with the run that wrote it (so a rollback can remove it). */
type StoredMessage = { run_id: string; message: StateMessage };

export type RunRecord = {
  run_id: string;
  thread_id: string;
  assistant_id: string;
  status: RunStatus;
  multitask_strategy: MultitaskStrategy;
  created_at: string;
  updated_at: string;
  metadata: Record<string, unknown>;
  /** Messages the run adds to the state when it starts. */
  input_messages: StateMessage[];
  /** Why the run ended in error or timeout. */
  error?: string;
};

/** A past state of a thread, for POST /threads/{tid}/history. */
export type Checkpoint = {
  checkpoint_id: string;
  created_at: string;
  /** The run that wrote it; a rollback deletes the run's checkpoints with its messages. */
  run_id: string | null;
  values: { messages: StateMessage[] };
};

export const HISTORY_KEPT = 100;

export type ThreadRecord = {
  thread_id: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: Record<string, unknown>;
  /** Changes whenever the state changes; reported as the checkpoint id. */
  checkpoint_id: string;
  messages: StoredMessage[];
  /** In creation order. */
  runs: RunRecord[];
  /** Past states, oldest first, at most HISTORY_KEPT (absent in threads saved before history existed). */
  history?: Checkpoint[];
  /** A stateless run's thread: deleted once its runs have ended (on_completion "delete"). */
  temporary?: true;
};

export const isInProgress = (run: RunRecord): boolean => run.status === "pending" || run.status === "running";
