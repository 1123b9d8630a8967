import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gitFailure } from "../../src/git/status/status-branch.js";
import { createGitStop, GitStopped, runNetworkGit } from "../../src/git/stoppable-git.js";

// The controller's stop as its git commands over the network see it (stoppable-git.ts): a command
// running at the stop, or started after it, gets `afterStopMs` more; once one ran out the remote is
// taken as not answering and the next is refused at once; and the error says it was the stop, not
// a credentials problem to fix.

let silent: Server;
let url: string;
/** Requests the server got; `asked` resolves at the next one. */
let requests = 0;
let asked: Promise<void>;
beforeEach(async () => {
  requests = 0;
  let heard = () => {};
  asked = new Promise((resolve) => (heard = resolve));
  // Reads each request, never answers.
  silent = createServer(() => {
    requests++;
    heard();
  });
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/acme/manifests.git`;
});
afterEach(() => {
  silent.closeAllConnections();
  silent.close();
});

const env = { PATH: process.env.PATH ?? "", HOME: "/nonexistent", GIT_TERMINAL_PROMPT: "0" };

describe("a git command over the network, after the controller's stop", () => {
  it("runs afterStopMs more, then ends; the next is not tried; each says it was the stop", async () => {
    const stopping = new AbortController();
    const stop = createGitStop(stopping.signal, 300);
    const running = runNetworkGit(["ls-remote", url], { env, stop }).catch((error: unknown) => error);
    await asked; // git is waiting on the server
    const stoppedAt = Date.now();
    stopping.abort();
    const first = await running;
    expect(Date.now() - stoppedAt).toBeGreaterThanOrEqual(250);
    // Ended, not hung: 0.3 s, or 2 s more if git ignored SIGTERM (SIGKILL), plus a loaded machine's delay.
    expect(Date.now() - stoppedAt).toBeLessThan(10_000);
    expect(first).toBeInstanceOf(GitStopped);
    expect((first as Error).message).toBe(
      "stopped: the git remote did not answer within 0.3 s of the controller's stop",
    );

    const before = requests;
    const next = await runNetworkGit(["ls-remote", url], { env, stop }).catch((error: unknown) => error);
    expect(requests).toBe(before); // not tried (a time bound of 100 ms here was the machine's load)
    expect((next as Error).message).toBe(
      "not tried: the controller is stopping and the git remote did not answer",
    );

    const failure = gitFailure(
      first,
      "status-branch-push-failed",
      "could not push status to branch plumb-status",
    );
    expect(failure.message).toBe(
      "could not push status to branch plumb-status: stopped: the git remote did not answer within 0.3 s of the controller's stop",
    );
  }, 20_000);

  it("without a stop, or before it, is git as it is", async () => {
    const stopping = new AbortController();
    const stop = createGitStop(stopping.signal, 300);
    const out = await runNetworkGit(["--version"], { env, stop });
    expect(out).toMatch(/^git version /);
    expect(await runNetworkGit(["--version"], { env })).toBe(out);
    await expect(runNetworkGit(["no-such-command"], { env, stop })).rejects.not.toBeInstanceOf(GitStopped);
  });
});
