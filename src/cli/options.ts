import { type Command, Option } from "commander";

// Flags shared by every command that talks to the control plane, so their names, help and env
// fallbacks stay the same everywhere.

export type ConnectionFlags = {
  apiUrl?: string;
  apiKeyFile?: string;
  tenantId?: string;
  platformUrl?: string;
  statusDir?: string;
  statusBranch?: string;
};

/** `-o, --output <format>` limited to `formats`, defaulting to text. */
export const outputOption = (formats: readonly string[]) =>
  new Option("-o, --output <format>", "output format").choices(formats).default("text");

/** `--target <name>` (repeatable): restrict the command to these objects. */
export const targetOption = (help: string) =>
  new Option("--target <name>", `${help} (repeatable)`)
    .argParser((value: string, all: string[] = []) => [...all, value])
    .default([]);

/** API connection (flags override PLUMB_* env) and the status store location. */
export function addConnectionOptions(command: Command, statusBranchHelp: string): Command {
  return command
    .option("--api-url <url>", "control plane URL (PLUMB_API_URL)")
    .option("--api-key-file <path>", "file holding the API key (else PLUMB_API_KEY)")
    .option("--tenant-id <id>", "tenant (workspace) id (PLUMB_TENANT_ID)")
    .option("--platform-url <url>", "platform API URL for organization settings (PLUMB_PLATFORM_URL)")
    .option("--status-dir <dir>", "status store (default PATH/.plumb/status)")
    .option("--status-branch <branch>", statusBranchHelp);
}
