import { isIP } from "node:net";
import { Command, Option } from "commander";
import { UsageError } from "../../errors.js";
import { isLoopback } from "../../controller/http/host-check.js";
import { createLogger } from "../../logger.js";
import { parseFaultSpec } from "../../control-plane/http/faults.js";
import { type ApiKeyGrant, DEFAULT_API_KEY } from "../../control-plane/options.js";
import { commandLineKeyWarning, readKeySources } from "./api-key-files.js";
import { organizationsOptionsFromEnv } from "../../control-plane/organizations/index.js";
import { startControlPlane } from "../../control-plane/server.js";

type Flags = {
  host: string;
  port: string;
  data?: string;
  mode: "saas" | "self-hosted";
  region: "us" | "eu";
  apiKey?: string[];
  apiKeyFile?: string[];
  revisionSeconds: string;
  runSeconds: string;
  faults?: string;
  faultSeed: string;
  webhookAllowHost?: string[];
};

const number = (text: string, flag: string, integer = false): number => {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value) || value < 0 || (integer && !Number.isInteger(value)))
    throw new UsageError(`${flag} must be a ${integer ? "whole " : ""}number ≥ 0, got "${text}"`);
  return value;
};

const port = (text: string): number => {
  const value = number(text, "--port", true);
  if (value > 65535) throw new UsageError(`--port must be from 0 to 65535 (0: any free port), got "${text}"`);
  return value;
};

/**
 * The start-up lines. Only the documented development key is shown in full; of a key the user
 * chose, not one character (not even a prefix or suffix, which narrows a guess and ends up in CI
 * logs): only which `--api-key` flag it came from and its length.
 */
export function formatStartup(
  url: string,
  grants: ApiKeyGrant[],
  state: string,
  faults?: string,
  from: readonly string[] = [],
): string[] {
  const describe = (key: string, index: number) =>
    key === DEFAULT_API_KEY
      ? key
      : `(key from ${from[index] ?? `--api-key #${index + 1}`}, ${key.length} characters)`;
  return [
    `plumb control plane listening on ${url}`,
    ...grants.map((g, i) => `  accepts API key ${describe(g.key, i)} for tenant(s) ${g.tenants.join(", ")}`),
    `  state: ${state}`,
    // Injected faults make clients fail on purpose: say so where the operator looks first.
    ...(faults ? [`  faults injected: ${faults} (requests fail on purpose)`] : []),
  ];
}

/** A host name or IP address, as a URL writes it: no scheme, port, path or credentials. */
export function webhookHost(text: string): string {
  const host = text.trim();
  const ipv6 = isIP(host.replace(/^\[|\]$/g, "")) === 6;
  if (host === "" || (!ipv6 && /[/:@?#\s]/.test(host)))
    throw new UsageError(
      `--webhook-allow-host takes a host name or IP address (e.g. hooks.example.com), got "${text}"`,
    );
  return host;
}

/**
 * Beyond loopback, the documented development key would let anyone who reaches the port in (and
 * through its run webhooks, to this machine's loopback): refused unless keys of one's own are given.
 */
function refuseOpenToTheNetwork(host: string, keys: readonly { grant: ApiKeyGrant }[]): void {
  if (isLoopback(host) || keys.some((k) => k.grant.key !== DEFAULT_API_KEY)) return;
  throw new UsageError(
    `--host ${host} listens beyond this machine, where the documented development key ${DEFAULT_API_KEY} lets anyone in: give keys of your own with --api-key-file FILE, or bind 127.0.0.1`,
  );
}

/** Calls `reload` on each SIGHUP until the returned function is called (the usual "re-read your files"). */
const onHangUp = (reload: () => void): (() => void) => {
  process.on("SIGHUP", reload);
  return () => process.off("SIGHUP", reload);
};

/**
 * Reads the key files again and grants what they hold now: a key added is accepted and a key taken
 * out is refused (401) from the next request on. A file that cannot be read or holds no key changes
 * nothing (the keys granted stay): said on stderr, naming the file, never a key.
 */
function reloadKeys(
  flags: Pick<Flags, "apiKey" | "apiKeyFile">,
  cp: { setApiKeys(grants: ApiKeyGrant[]): void },
  stderr: { write(text: string): unknown },
): void {
  if (!flags.apiKeyFile?.length) {
    stderr.write("plumb control-plane: SIGHUP: no --api-key-file to read again; the keys stay\n");
    return;
  }
  try {
    const keys = readKeySources(flags);
    cp.setApiKeys(keys.map((k) => k.grant));
    stderr.write(`plumb control-plane: SIGHUP: API keys read again: ${keys.length} accepted\n`);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    stderr.write(`plumb control-plane: SIGHUP: ${message}; the keys granted before stay\n`);
  }
}

const untilSignal = () =>
  new Promise<NodeJS.Signals>((resolve) => {
    process.once("SIGTERM", () => resolve("SIGTERM"));
    process.once("SIGINT", () => resolve("SIGINT"));
  });

/**
 * `until` resolves when the server should stop (tests inject it; the CLI waits for a signal).
 * `env` is read here, once, at the edge (SELF_HOSTED_JIT_PROVISIONING_ENABLED).
 */
export function controlPlaneCommand(
  stdout: { write(text: string): unknown } = process.stdout,
  until: () => Promise<string> = untilSignal,
  env: NodeJS.ProcessEnv = process.env,
  stderr: { write(text: string): unknown } = process.stderr,
  reloads: (reload: () => void) => () => void = onHangUp,
): Command {
  return new Command("control-plane")
    .description("Run a local control plane: a real server of the deployments, platform and agent APIs")
    .option("--host <host>", "address to bind", "127.0.0.1")
    .option("--port <port>", "port to listen on (0 picks a free one)", "8123")
    .option("--data <dir>", "keep state durably in this directory (default: in memory)")
    .addOption(
      new Option("--mode <mode>", "installation mode").choices(["saas", "self-hosted"]).default("saas"),
    )
    .addOption(new Option("--region <region>", "rate-limit table").choices(["us", "eu"]).default("us"))
    .option(
      "--api-key <key...>",
      "accepted key, KEY or KEY=TENANT_ID[,TENANT_ID] (repeatable; visible to ps: prefer --api-key-file)",
    )
    .option(
      "--api-key-file <file>",
      "file of accepted keys, one KEY or KEY=TENANT_ID[,TENANT_ID] per line (repeatable; read again on SIGHUP)",
      (file: string, files: string[] = []) => [...files, file],
    )
    .option("--revision-seconds <s>", "seconds per revision state (0: immediate)", "1")
    .option("--run-seconds <s>", "seconds a simulated agent run takes", "1")
    .option(
      "--faults <spec>",
      "inject faults, e.g. 500=0.05,503=0.05,429=0.05,reset=0.02,lost-response=0.02,latency=10-200",
    )
    .option("--fault-seed <n>", "seed of the fault generator (reproducible runs)", "1")
    .option(
      "--webhook-allow-host <host>",
      "a host, beyond loopback, that agent-server run webhooks may call (repeatable)",
      (host: string, hosts: string[] = []) => [...hosts, webhookHost(host)],
    )
    .action(async (flags: Flags) => {
      const logger = createLogger({ name: "control-plane" }, process.stderr);
      const warning = commandLineKeyWarning(flags.apiKey, DEFAULT_API_KEY);
      if (warning) stderr.write(`plumb control-plane: warning: ${warning}\n`);
      const keys = readKeySources(flags);
      refuseOpenToTheNetwork(flags.host, keys);
      const cp = await startControlPlane({
        host: flags.host,
        port: port(flags.port),
        dataDir: flags.data,
        mode: flags.mode,
        region: flags.region,
        apiKeys: keys.length > 0 ? keys.map((k) => k.grant) : undefined,
        revisionSeconds: number(flags.revisionSeconds, "--revision-seconds"),
        runSeconds: number(flags.runSeconds, "--run-seconds"),
        faults: flags.faults === undefined ? undefined : parseFaultSpec(flags.faults),
        faultSeed: number(flags.faultSeed, "--fault-seed", true),
        webhookAllowHosts: flags.webhookAllowHost,
        logger,
        ...organizationsOptionsFromEnv(env),
      });
      const state = `${flags.data ? `durable in ${flags.data}` : "in memory"}; mode ${flags.mode}, region ${flags.region}`;
      const from = keys.map((k) => k.from);
      for (const line of formatStartup(cp.url, cp.apiKeys, state, flags.faults, from))
        stdout.write(`${line}\n`);
      // SIGHUP reads the key files again: a key rotated or revoked without a restart.
      const stopReloads = reloads(() => reloadKeys(flags, cp, stderr));
      const signal = await until();
      stopReloads();
      logger.info({ signal }, "shutting down");
      await cp.stop();
      logger.info({}, "stopped");
    });
}
