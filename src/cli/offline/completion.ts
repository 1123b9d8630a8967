import { Argument, Command } from "commander";
import { bashCompletion, describeCommands, fishCompletion, zshCompletion } from "./completion-scripts.js";

type Factories = Record<string, () => Promise<Command>>;

/** `plumb completion bash|zsh|fish`: prints the completion script for that shell. */
export function completionCommand(
  commands: Factories,
  stdout: { write(text: string): unknown } = process.stdout,
): Command {
  return new Command("completion")
    .description(
      "Print a shell completion script (bash, zsh or fish) for plumb's commands, flags and their values",
    )
    .addArgument(new Argument("<shell>", "the shell").choices(["bash", "zsh", "fish"]))
    .addHelpText(
      "after",
      `
Install:
  bash  echo 'eval "$(plumb completion bash)"' >> ~/.bashrc
  zsh   echo 'eval "$(plumb completion zsh)"' >> ~/.zshrc      (after compinit)
  fish  plumb completion fish > ~/.config/fish/completions/plumb.fish`,
    )
    .action(async (shell: "bash" | "zsh" | "fish") => {
      const all = await Promise.all(Object.values(commands).map((load) => load()));
      const specs = describeCommands(all);
      const format = { bash: bashCompletion, zsh: zshCompletion, fish: fishCompletion }[shell];
      stdout.write(format(specs));
    });
}
