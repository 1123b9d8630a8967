import { type Command, InvalidArgumentError, Option } from "commander";
import { parseAllowedOrigin } from "../api/allowed-origins.js";

// Flags shared by every command that talks to the control plane, so their names, help and env
// fallbacks stay the same everywhere.

/** plumb's version (package.json's; a test keeps them equal): `--version`, and the tool a SARIF log names. */
export const PLUMB_VERSION = "0.1.0";

export type ConnectionFlags = {
  /** --allow-api-origin: the only origins a credential may go to (docs/security.md). */
  allowApiOrigin?: string[];
  apiUrl?: string;
  apiKeyFile?: string;
  tenantId?: string;
  platformUrl?: string;
  statusDir?: string;
  statusBranch?: string;
  /** Set per environment by --env (environments.ts): its store's place on the status branch. */
  environment?: string;
};

/** `-o, --output <format>` limited to `formats`, defaulting to text. */
export const outputOption = (formats: readonly string[]) =>
  new Option("-o, --output <format>", "output format").choices(formats).default("text");

/** `--target <name>` (repeatable): restrict the command to these objects. */
export const targetOption = (help: string) =>
  new Option("--target <name>", `${help} (repeatable)`)
    .argParser((value: string, all: string[] = []) => [...all, value])
    .default([], "every object");

/** `--env <name>` (repeatable): run for these environments (docs/environments.md); all when none. */
export const envOption = () =>
  new Option("--env <name>", "only this environment (repeatable; docs/environments.md)")
    .argParser((value: string, all: string[] = []) => [...all, value])
    .default([], "every environment");

/** `--replace NAME` (repeatable): allow deleting and re-creating a deployment whose immutable fields changed. */
export const replaceOption = () =>
  new Option(
    "--replace <name>",
    "replace this deployment (delete, then create: downtime and a new id) when an immutable field changed (repeatable)",
  )
    .argParser((value: string, all: string[] = []) => [...all, value])
    .default([], "none");

/**
 * `--allow-api-origin ORIGIN` (repeatable): plumb sends its API key only to these origins, whatever
 * the manifests or PLUMB_API_URL say (docs/security.md "Pinning where the key goes"). Each value is
 * checked here: a path, a query or another scheme is a usage error naming it.
 */
export const allowApiOriginOption = () =>
  new Option(
    "--allow-api-origin <origin>",
    "send the API key only to this origin, e.g. https://api.example.com (repeatable; else PLUMB_ALLOWED_API_ORIGINS, comma-separated); any other API, platform or agent URL is refused",
  ).argParser((value: string, all: string[] = []) => {
    try {
      parseAllowedOrigin(value, "--allow-api-origin");
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
    return [...all, value];
  });

/** API connection (flags override PLUMB_* env) and the status store location. */
export function addConnectionOptions(command: Command, statusBranchHelp: string): Command {
  return command
    .option("--api-url <url>", "control plane URL (PLUMB_API_URL)")
    .addOption(allowApiOriginOption())
    .option("--api-key-file <path>", "file holding the API key (else PLUMB_API_KEY)")
    .option("--tenant-id <id>", "tenant (workspace) id (PLUMB_TENANT_ID)")
    .option("--platform-url <url>", "platform API URL for organization settings (PLUMB_PLATFORM_URL)")
    .option(
      "--mode <mode>",
      "saas or self-hosted: the installation's mode, for a control plane that does not report it (PLUMB_MODE); plan refuses sources that mode cannot create",
    )
    .option("--status-dir <dir>", "status store (default PATH/.plumb/status)")
    .option("--status-branch <branch>", statusBranchHelp);
}

/** "20m", "90s", "1h", "500ms"; a bare number is seconds. */
export function parseDuration(text: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/.exec(text.trim());
  if (!match) throw new InvalidArgumentError(`expected a duration like 20m, 90s or 1h, got "${text}"`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[(match[2] ?? "s") as "ms" | "s" | "m" | "h"];
  return Math.round(Number(match[1]) * unit);
}

/** `--lock-timeout <duration>`: how long to wait for the state lock another writer holds. */
export const lockTimeoutOption = () =>
  new Option(
    "--lock-timeout <duration>",
    "wait this long for the state lock when another apply, adopt or controller holds it (e.g. 60s)",
  )
    .argParser(parseDuration)
    .default(0, "0s: fail at once with state-locked");
