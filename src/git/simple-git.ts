import { createRequire } from "node:module";
import type { simpleGit as SimpleGitFactory } from "simple-git";

// simple-git, loaded the first time git is used rather than by every command: a controller on a
// directory never runs git, and the package with its dependencies is ~1.4 MB of heap all day
// (docs/controller.md "Speed and memory"). require caches the module after the first call.

const require = createRequire(import.meta.url);

export const simpleGit = ((...args: unknown[]) =>
  (require("simple-git") as { simpleGit: (...a: unknown[]) => unknown }).simpleGit(
    ...args,
  )) as typeof SimpleGitFactory;
