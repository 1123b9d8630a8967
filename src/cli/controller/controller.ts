import { Command, Option } from "commander";
import { FILE_SETTLE_MS } from "../../controller/snapshot/read-at-rest.js";
import { tuneHeapForController } from "./heap-tuning.js";
import { memoryLimitFrom } from "./memory-limit.js";
import { allowedHostName, type Flags, httpUrl } from "./controller-settings.js";
import { cronExpression, leaseDuration, parseRateLimit, positiveInt } from "../flag-values.js";
import { addConnectionOptions, envOption, parseDuration } from "../options.js";

/** `plumb controller`: keeps the control plane in step with a directory or a git branch, all day. */
export function controllerCommand(): Command {
  const command = new Command("controller")
    .description("Run continuously: watch a directory or follow a git branch, reconcile changes, check drift")
    .addHelpText(
      "after",
      "\nMemory: the controller sets its own heap settings. Under a limit of 512 MiB or less\n" +
        "(PLUMB_MEMORY_LIMIT, e.g. 256Mi, else the container's cgroup limit) it sizes itself for a\n" +
        'small pod: old generation at 5/16 of the limit (docs/controller.md "Speed and memory").',
    );
  addSourceOptions(command);
  addDriftAndPruneOptions(command);
  addTuningOptions(command);
  addStatusOptions(command);
  command.addOption(envOption());
  addConnectionOptions(command, "also commit the status to this branch of the manifest repository");
  // There is no PATH argument here: the status store sits in the manifest repository.
  const statusDir = command.options.find((option) => option.long === "--status-dir");
  if (statusDir)
    statusDir.description =
      "status store (default <manifest directory (--path)>/.plumb/status, as plan and apply)";
  return command.action(async (flags: Flags, cmd: Command) => {
    flags.branchSet = cmd.getOptionValueSource("branch") === "cli";
    const unapplied = tuneHeapForController(
      process,
      memoryLimitFrom(process.env, process.constrainedMemory?.()),
    );
    // The controller's modules load after the restart with its heap settings, not before it too.
    const { runController } = await import("./run-controller.js");
    await runController(flags, process.env, process, unapplied);
    process.exitCode = 0;
  });
}

/** Where the manifests come from, and the status page's address and git hook. */
function addSourceOptions(command: Command): void {
  command
    .option("--dir <path>", "watch this manifest directory")
    .option("--repo <url>", "follow this git repository (credentials: PLUMB_GIT_USERNAME / PLUMB_GIT_TOKEN)")
    .option("--branch <name>", "branch of --repo to follow", "main")
    .option("--path <subdir>", "manifest directory inside the repository")
    .addOption(
      new Option("--interval <duration>", "how often to fetch --repo")
        .argParser(parseDuration)
        .default(60_000, "60s"),
    )
    .option("--workdir <dir>", "where the checkout of --repo lives (default .plumb/checkout)")
    .option(
      "--listen <host:port>",
      "serve the status page at / and /livez /readyz /metrics /status /hooks/git",
      "127.0.0.1:9400",
    )
    .option("--webhook-secret-file <path>", "shared secret of POST /hooks/git (else PLUMB_WEBHOOK_SECRET)");
}

/** Drift checks, self-heal, drift and promotion branches, and prune with its limits. */
function addDriftAndPruneOptions(command: Command): void {
  command
    .option("--drift-schedule <cron>", 'check drift on this schedule, e.g. "*/10 * * * *"', cronExpression)
    .option("--self-heal", "re-apply git's version when drift is found (default: report only)")
    .option(
      "--drift-branch <name>",
      "with --repo: after each drift check, commit the live values of drifted fields to this branch and push it (for a pull request) instead of only reporting them",
    )
    .option(
      "--promote-branch-prefix <prefix>",
      "with --repo and environments: after each drift check, open the promotion of every environment with promotion.auto: true as branch PREFIX+ENV once its gates hold, and notify promotion-ready",
    )
    .option(
      "--prune",
      "delete deployments plumb manages whose manifests were removed (never unmanaged ones, never plumb/prune: disabled; nothing while a manifest is invalid)",
    )
    .option(
      "--prune-max <n>",
      "delete at most this many per --prune-window (counted in the status directory across scans and restarts); more waits, with a prune-blocked event",
      positiveInt,
      5,
    )
    .addOption(
      new Option("--prune-window <duration>", "the window --prune-max counts deletions in")
        .argParser(parseDuration)
        .default(3_600_000, "1h"),
    )
    .addOption(
      new Option(
        "--prune-delay <duration>",
        "delete a removal only once two scans at least this far apart have seen it",
      )
        .argParser(parseDuration)
        .default(30_000, "30s"),
    );
}

/** Concurrency, debounce, timeouts, backoff, polling and shutdown. */
function addTuningOptions(command: Command): void {
  command
    .option("--concurrency <n>", "objects reconciled at once", positiveInt, 8)
    .addOption(
      new Option(
        "--debounce <duration>",
        "quiet time before rescanning a burst of file events (a checkout, a script); a single save rescans after ~25 ms",
      )
        .argParser(parseDuration)
        .default(200, "200ms"),
    )
    .addOption(
      new Option(
        "--settle <duration>",
        "a watched directory's file is read only once unchanged this long (a writer pausing mid-file)",
      )
        .argParser(parseDuration)
        .default(FILE_SETTLE_MS, `${FILE_SETTLE_MS}ms`),
    )
    .addOption(
      new Option("--timeout <duration>", "per object: wait for DEPLOYED and verify")
        .argParser(parseDuration)
        .default(20 * 60_000, "20m"),
    )
    .addOption(
      new Option("--backoff-max <duration>", "longest wait between retries of a failing object")
        .argParser(parseDuration)
        .default(10 * 60_000, "10m"),
    )
    .addOption(
      new Option("--poll-interval <duration>", "first wait between revision status checks")
        .argParser(parseDuration)
        .default(1_000, "1s"),
    )
    .addOption(
      new Option("--shutdown-grace <duration>", "on SIGTERM, how long running reconciles may finish")
        .argParser(parseDuration)
        .default(20_000, "20s"),
    );
}

/** Who may read the status, notifications, the lease, the API budget. */
function addStatusOptions(command: Command): void {
  command
    .option(
      "--status-token-file <path>",
      "GET /status and the status page's data require Authorization: Bearer <token from this file> (else PLUMB_STATUS_TOKEN; unset: open, and --listen must be a loopback address)",
    )
    .addOption(
      new Option(
        "--allowed-host <name>",
        "also answer requests for this Host (repeatable; always: the --listen host, localhost, IP addresses and the --public-url host; others get 421)",
      )
        .argParser(allowedHostName)
        .default([], "none"),
    )
    .option(
      "--insecure-status",
      "allow a non-loopback --listen without a status token: /status and the status page open to whoever reaches it",
    )
    .addOption(
      new Option(
        "--notify <url>",
        "POST a JSON event per outcome (applied, failed, drift-detected, drift-healed, pruned, lock-lost) to this URL; repeatable. A webhook URL is a secret that argv shows to ps: prefer --notify-file or PLUMB_NOTIFY_URLS",
      )
        .argParser(httpUrl("--notify"))
        .default([], "none"),
    )
    .option(
      "--notify-file <path>",
      "the --notify URLs, one a line, kept out of argv (else PLUMB_NOTIFY_URLS, separated by white space)",
    )
    .option(
      "--notify-secret-file <path>",
      "sign notifications: X-Plumb-Signature: sha256=<HMAC-SHA256 of the body> (else PLUMB_NOTIFY_SECRET)",
    )
    .option(
      "--public-url <url>",
      "the status page's address as people reach it, for links in notifications (default: the --listen address)",
      (value: string) => httpUrl("--public-url")(value)[0]!,
    )
    .addOption(
      new Option(
        "--lock-lease <duration>",
        "state lock lease: a standby takes over once it has seen no renewal for this long on its own clock; the leader stops writing after 2/3 of it without one (at least 1s)",
      )
        .argParser(leaseDuration)
        .default(30_000, "30s"),
    )
    .option(
      "--api-rate-limit <requests/window>",
      "the key's request budget the controller keeps under (default 1000/10s, the API's default)",
      parseRateLimit,
    );
}
