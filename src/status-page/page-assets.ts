import { readFileSync } from "node:fs";

// The browser script, read once from beside this module: src/status-page/browser/ when run from
// source (tests), dist/src/status-page/browser/ when built (tsconfig.page.json emits it there).

let script: string | undefined;

export function loadPageScript(): string {
  script ??= readFileSync(new URL("./browser/status-page.js", import.meta.url), "utf8");
  return script;
}
