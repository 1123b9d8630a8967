// Every command's help ends with examples a reader can copy, the README's (README.md "Commands"),
// and, for a command that reaches a control plane, where its settings come from: `plumb plan
// --help` named every flag but showed no command line, and never said PLUMB_API_URL was needed.

const CONNECTS = [
  'Settings: PLUMB_API_URL and PLUMB_API_KEY (or the flags above; README "Configuration");',
  "with kind: Environment documents, each environment's own (docs/environments.md).",
  'Exit codes: README "Exit codes".',
].join("\n");

/** Each command's examples (a comment after `#`), and whether it reaches a control plane. */
const HELP: Record<string, { examples: string[]; connects?: boolean }> = {
  validate: {
    examples: [
      "plumb validate examples",
      "plumb validate deployments --env prod                # prod's merged deployments too",
      "plumb validate deployments --output github           # annotations, in a GitHub Actions step",
    ],
  },
  "control-plane": {
    examples: [
      "plumb control-plane --port 8123 --data .plumb/cp     # key: plumb-local-key",
      'plumb control-plane --port 8124 --faults "500=0.05,lost-response=0.02" --fault-seed 4',
    ],
  },
  render: { examples: ["plumb render examples --env prod --target support-agent"] },
  plan: {
    connects: true,
    examples: [
      "PLUMB_API_URL=http://127.0.0.1:8123 PLUMB_API_KEY=plumb-local-key plumb plan deployments",
      "plumb plan deployments --output markdown > plan.md   # a pull-request comment",
      "plumb plan deployments --out plan.json               # reviewed, then: apply --plan plan.json",
      "plumb plan deployments --env staging --detailed-exitcode",
    ],
  },
  diff: { connects: true, examples: ["plumb diff deployments/triage-agent.yaml"] },
  apply: {
    connects: true,
    examples: [
      "plumb apply deployments                              # plan, confirm, send, wait for DEPLOYED",
      "plumb apply deployments --yes --timeout 10m          # in CI (no terminal to confirm on)",
      "plumb apply deployments --plan plan.json --yes       # exactly the plan reviewed",
      "plumb apply deployments --env staging --yes",
    ],
  },
  drift: {
    connects: true,
    examples: [
      "plumb drift deployments --output markdown            # exit 2: drift found (0: in sync)",
      "plumb drift deployments --write                      # the drifted live values into the YAML",
    ],
  },
  promote: {
    connects: true,
    examples: [
      "plumb promote examples --to prod                     # the report and the diff; nothing written",
      "plumb promote examples --to prod --branch promote/prod",
    ],
  },
  adopt: { connects: true, examples: ["OPENAI_API_KEY=... plumb adopt deployments --yes"] },
  import: {
    connects: true,
    examples: [
      "plumb import --out deploy --organization",
      "OPENAI_API_KEY=... plumb import --out deploy --adopt # the first plan is then a no-op",
    ],
  },
  status: {
    connects: true,
    examples: ["plumb status deployments", "plumb status deployments --output json"],
  },
  unlock: {
    examples: [
      "plumb unlock deployments                             # who holds the lock",
      "plumb unlock deployments --force                     # its holder is gone for good",
    ],
  },
  schemas: { examples: ["plumb schemas --out schemas"] },
  controller: {
    connects: true,
    examples: [
      'plumb controller --dir deployments --drift-schedule "*/10 * * * *" --self-heal',
      "plumb controller --repo https://github.com/acme/agents --branch main --path deployments",
      "curl -s http://127.0.0.1:9400/metrics | grep plumb_objects",
    ],
  },
  demo: {
    examples: ["plumb demo                                           # until Ctrl-C", "plumb demo --once"],
  },
};

/** The text after a command's options: its examples, then its settings when it connects. */
export function helpAfter(name: string): string {
  const help = HELP[name];
  if (!help) return "";
  const examples = help.examples.map((line) => `  $ ${line}`).join("\n");
  return `\nExamples:\n${examples}\n${help.connects ? `\n${CONNECTS}\n` : ""}`;
}

/**
 * After `plumb --help`'s command list: a quick start, where the settings come from and the exit
 * codes (README "Exit codes", word for word: a test compares them). It listed the commands only.
 */
export const PROGRAM_HELP_AFTER = `
Quick start:
  $ plumb demo --once                                  # the examples, end to end, on this machine
  $ plumb control-plane --port 8123 &                  # a local control plane, key plumb-local-key
  $ export PLUMB_API_URL=http://127.0.0.1:8123 PLUMB_API_KEY=plumb-local-key
  $ plumb validate deployments && plumb plan deployments
  $ plumb apply deployments                            # plan, confirm, send, wait for DEPLOYED

Settings (each command's flags override them; README "Configuration"):
  PLUMB_API_URL     the control plane's URL (--api-url)
  PLUMB_API_KEY     its API key (or --api-key-file FILE; there is no --api-key flag)
  PLUMB_TENANT_ID   the workspace, when the key reaches several (--tenant-id)
  With kind: Environment documents, each environment's own (docs/environments.md).

Exit codes:
  0          success / in sync / nothing to change
  1          validation errors, refused changes, failed apply, API errors
  2          \`plan --detailed-exitcode\`: changes pending; \`drift\`: drift detected
  64         bad command-line usage
  70         internal error (a bug: please report it with the message)
  130 / 143  interrupted by Ctrl-C / SIGTERM
  With --output json a failure prints {"error": {code, message, fix, exit_code}} on stdout.

Each command's help (plumb COMMAND --help) ends with its examples.
`;
