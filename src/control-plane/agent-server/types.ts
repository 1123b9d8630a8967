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
  /** When it last started running (its webhook's run_started_at). */
  started_at?: string;
  /** Input was null: the run continues the thread's pending nodes (absent in older records). */
  continues?: true;
  /** `command` of the run: a resume value, a state update, a node to go to. */
  command?: RunCommand;
  /** Nodes to stop before / after (the run's, else its assistant's config); "*" for every node. */
  interrupt_before?: string[];
  interrupt_after?: string[];
  /** A run created with after_seconds starts no earlier than this. */
  not_before?: string;
  /** The checkpoint the run forks from (`checkpoint_id` / `checkpoint` of the request). */
  fork_from?: string;
  /** What the run was created with, as the request sent it (reported as `kwargs`). */
  kwargs?: Record<string, unknown>;
};

export type RunCommand = { resume?: { value: unknown }; update?: StateMessage[]; goto?: string };

/** An interrupt raised in a node, as the SDK reads it. */
export type Interrupt = { value: unknown; id: string };

/** A node due to run from a checkpoint (its `next`), with the interrupts it raised there. */
export type PendingTask = { id: string; name: string; interrupts: Interrupt[] };

export type CheckpointSource = "input" | "loop" | "update" | "fork";

/** A past state of a thread, for POST /threads/{tid}/history. */
export type Checkpoint = {
  checkpoint_id: string;
  created_at: string;
  /** The run that wrote it; a rollback deletes the run's checkpoints with its messages. */
  run_id: string | null;
  values: { messages: StateMessage[] };
  /** The nodes due from this checkpoint (absent in checkpoints saved before interrupts existed). */
  tasks?: PendingTask[];
  source?: CheckpointSource;
  step?: number;
  parent_checkpoint_id?: string | null;
  /** What wrote it: `{node: {messages}}` (LangGraph's `writes` metadata). */
  writes?: Record<string, unknown> | null;
  /** Metadata added by PATCH /threads/{tid}/state (SDK threads.patchState). */
  extra_metadata?: Record<string, unknown>;
  /**
   * `interrupt_after` stopped the run after the node that wrote it: the id of that node's task.
   * The thread is `interrupted` (with `{task id: []}` as its interrupts) though nothing is due,
   * as on the open-source server, until the next run or state update.
   */
  stopped_after?: string;
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
