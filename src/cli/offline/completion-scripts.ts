import type { Command } from "commander";

// `plumb completion bash|zsh|fish`: completion scripts generated from the commands' own definitions
// (names, options, choices), so a new flag completes without anyone editing a script. Pure.

type OptionSpec = {
  short?: string;
  long: string;
  description: string;
  takesValue: boolean;
  choices?: string[];
};
export type CommandSpec = { name: string; description: string; options: OptionSpec[] };

export function describeCommands(commands: readonly Command[]): CommandSpec[] {
  return commands
    .map((command) => ({
      name: command.name(),
      description: command.description(),
      options: [
        ...command.options.map((option) => ({
          ...(option.short ? { short: option.short } : {}),
          long: option.long ?? option.flags,
          description: option.description,
          takesValue: option.required || option.optional,
          ...(option.argChoices ? { choices: option.argChoices } : {}),
        })),
        { long: "--help", description: "show help for this command", takesValue: false },
      ],
    }))
    .sort((a, b) => a.name.localeCompare(b.name));
}

const words = (list: readonly string[]) => list.join(" ");
/** Values that are paths complete as files; others (names, durations, URLs) complete as nothing. */
const takesPath = (o: OptionSpec) => /^--(dir|out|plan|path|workdir)$|-(file|dir)$/.test(o.long);
/**
 * Text safe inside single quotes in every shell, and free of zsh's spec characters. An apostrophe
 * becomes ’ (U+2019), which needs no quoting anywhere: as a space it read "plumb s commands".
 */
const plain = (text: string) =>
  text
    .replace(/'/g, "\u2019")
    .replace(/[[\]:\\]/g, " ")
    .replace(/\s+/g, " ")
    .trim();

export function bashCompletion(specs: readonly CommandSpec[]): string {
  const valueCases = specs.flatMap((c) =>
    c.options
      .filter((o) => o.takesValue)
      .map((o) => {
        const flags = [o.long, ...(o.short ? [o.short] : [])].map((f) => `"${c.name} ${f}"`).join("|");
        const reply = o.choices
          ? `COMPREPLY=($(compgen -W '${words(o.choices)}' -- "$cur"))`
          : takesPath(o)
            ? `COMPREPLY=($(compgen -f -- "$cur"))`
            : "COMPREPLY=()";
        return `    ${flags}) ${reply}; return ;;`;
      }),
  );
  const optionCases = specs.map((c) => `    ${c.name}) opts='${words(c.options.map((o) => o.long))}' ;;`);
  return `# bash completion for plumb: eval "$(plumb completion bash)" in ~/.bashrc
_plumb() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="\${COMP_WORDS[COMP_CWORD-1]}" cmd="\${COMP_WORDS[1]}" opts=""
  if [ "$COMP_CWORD" -eq 1 ]; then
    COMPREPLY=($(compgen -W '${words(specs.map((c) => c.name))} --help --version' -- "$cur"))
    return
  fi
  case "$cmd $prev" in
${valueCases.join("\n")}
  esac
  case "$cmd" in
${optionCases.join("\n")}
  esac
  if [[ "$cur" == -* ]]; then COMPREPLY=($(compgen -W "$opts" -- "$cur")); else COMPREPLY=($(compgen -f -- "$cur")); fi
}
complete -o filenames -F _plumb plumb
`;
}

export function zshCompletion(specs: readonly CommandSpec[]): string {
  const option = (o: OptionSpec) => {
    const names = o.short ? `{${o.short},${o.long}}` : o.long;
    const value = o.takesValue
      ? o.choices
        ? `:value:(${words(o.choices)})`
        : takesPath(o)
          ? ":path:_files"
          : ":value: "
      : "";
    return `'${o.short ? "(" + o.short + " " + o.long + ")" : ""}'${names}'[${plain(o.description)}]${value}'`;
  };
  const cases = specs.map(
    (c) => `    ${c.name}) _arguments -s ${c.options.map(option).join(" ")} '*:path:_files' ;;`,
  );
  return `#compdef plumb
# zsh completion for plumb: eval "$(plumb completion zsh)" in ~/.zshrc (after compinit)
_plumb() {
  local -a commands
  commands=(${specs.map((c) => `'${c.name}:${plain(c.description)}'`).join(" ")})
  if (( CURRENT == 2 )); then
    _describe 'command' commands
    return
  fi
  case $words[2] in
${cases.join("\n")}
  esac
}
compdef _plumb plumb
`;
}

export function fishCompletion(specs: readonly CommandSpec[]): string {
  const lines = [
    "# fish completion for plumb: plumb completion fish > ~/.config/fish/completions/plumb.fish",
    "complete -c plumb -f",
    ...specs.map(
      (c) => `complete -c plumb -n __fish_use_subcommand -a ${c.name} -d '${plain(c.description)}'`,
    ),
    ...specs.flatMap((c) =>
      c.options.map((o) => {
        const value = o.takesValue
          ? o.choices
            ? ` -x -a '${words(o.choices)}'`
            : takesPath(o)
              ? " -r -F"
              : " -x"
          : "";
        const short = o.short ? ` -s ${o.short.slice(1)}` : "";
        return `complete -c plumb -n '__fish_seen_subcommand_from ${c.name}'${short} -l ${o.long.slice(2)}${value} -d '${plain(o.description)}'`;
      }),
    ),
    // Manifest paths after a command.
    `complete -c plumb -n 'not __fish_use_subcommand' -F`,
  ];
  return `${lines.join("\n")}\n`;
}
