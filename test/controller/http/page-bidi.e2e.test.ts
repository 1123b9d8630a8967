import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { parseFaultSpec } from "../../../src/control-plane/http/faults.js";
import { type RunningControlPlane, startControlPlane } from "../../../src/control-plane/server.js";
import { type Controller, startController } from "../../../src/controller/controller.js";
import { fastControllerOptions } from "../harness.js";
import { container, waitFor, writeDoc } from "../support.js";

// A server's message reached the status page with its bidirectional overrides as they were: a
// control plane quoting the request it refused (--faults echo=1) quoted a value holding U+202E, and
// the page showed the rest of the error reversed ("Trojan Source"). The page's data writes each
// as its escape, as the text formats print it; /status, for programs, keeps the text as it is.

let cp: RunningControlPlane | undefined;
let controller: Controller | undefined;
let dir: string | undefined;
afterEach(async () => {
  await controller?.stop(1_000);
  await cp?.stop();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("the page shows a bidirectional override in a server's error as its escape", async () => {
  cp = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    faults: parseFaultSpec("echo=1"),
  });
  dir = await mkdtemp(join(tmpdir(), "plumb-page-bidi-"));
  await writeDoc(dir, "alpha.yaml", container("alpha", "img/alpha:1\u202egnp.exe"));
  controller = await startController(
    fastControllerOptions(cp, { source: { kind: "dir", dir }, listen: { host: "127.0.0.1", port: 0 } }),
  );
  const url = controller.url;
  type Status = { objects: Array<{ name: string; last_error: string | null }> };
  const status = await waitFor("the failure recorded", async () => {
    const body = (await (await fetch(`${url}/status`)).json()) as Status;
    return body.objects.find((o) => o.name === "alpha" && o.last_error) ? body : null;
  });
  // The server's echo in the error is text for people: its override is an escape there already
  // (escapeControls), as in the CLI's output.
  expect(status.objects[0]!.last_error).toContain("img/alpha:1\\u202egnp.exe");
  expect(status.objects[0]!.last_error).not.toContain("\u202e");

  const list = await (await fetch(`${url}/ui/api/objects`)).text();
  const detail = await (await fetch(`${url}/ui/api/objects/Deployment/alpha`)).text();
  for (const text of [list, detail]) {
    expect(text).toContain("img/alpha:1\\\\u202egnp.exe");
    expect(text).not.toContain("\u202e");
  }
});
