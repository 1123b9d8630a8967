import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, expect, it } from "vitest";
import { parseFaultSpec } from "../../../src/control-plane/http/faults.js";
import { type RunningControlPlane, startControlPlane } from "../../../src/control-plane/server.js";
import { type Controller, startController } from "../../../src/controller/controller.js";
import { MAX_MESSAGE_CHARS } from "../../../src/controller/notify/notify-payload.js";
import { LIST_ERROR_CHARS } from "../../../src/status-page/page-model.js";
import { fastControllerOptions } from "../harness.js";
import { startReceiver } from "../notify-receiver.js";
import { container, waitFor, writeDoc } from "../support.js";

// A control plane (or a proxy before it) that quotes the request it refused, in every form
// (--faults echo=1): a create holding a 100 KB image reference failed with a 400 whose detail is
// close to a megabyte. That failure was one 968 KB notification (kept up to 1,000 times per
// receiver while it is down) and a 485 KB row in every page of the status page's list, re-read at
// each live update. The notification and the list carry the start of the error and say how much
// was left out; the object's detail view has the error as the API client kept it: the server's
// detail cut at 2,000 characters, saying how many more there were (src/api/transport/response-body.ts).

let cp: RunningControlPlane | undefined;
let controller: Controller | undefined;
let dir: string | undefined;
const closers: Array<() => Promise<void>> = [];
afterEach(async () => {
  await controller?.stop(1_000);
  await cp?.stop();
  for (const close of closers.splice(0)) await close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

it("a very long server error is cut in notifications and the page's list, as the client kept it in the detail view", async () => {
  cp = await startControlPlane({
    revisionSeconds: 0,
    deploymentReadySeconds: 0,
    faults: parseFaultSpec("echo=1"),
  });
  dir = await mkdtemp(join(tmpdir(), "plumb-notify-long-"));
  const receiver = await startReceiver();
  closers.push(() => receiver.close());
  await writeDoc(dir, "alpha.yaml", container("alpha", `img/alpha:${"x".repeat(100_000)}`));
  controller = await startController(
    fastControllerOptions(cp, {
      source: { kind: "dir", dir },
      listen: { host: "127.0.0.1", port: 0 },
      notify: { urls: [receiver.url] },
    }),
  );
  await waitFor("the failure announced", () => receiver.deliveries.length >= 1, 20_000);
  const [delivery] = receiver.deliveries;
  expect(delivery!.json.event).toBe("failed");
  const message = String(delivery!.json.message);
  expect(message).toMatch(/^POST \/v2\/deployments failed: 400/);
  expect(message).toMatch(/… \(\d+ more characters not sent\)$/);
  expect(message.length).toBeLessThan(MAX_MESSAGE_CHARS + 100);
  expect(delivery!.body.length).toBeLessThan(3 * MAX_MESSAGE_CHARS);

  // The list and the detail are two requests: a retry of the failed create between them may record
  // another failure's text (CI's Node 20 once read a detail that did not start as the row did), so
  // both are read until they show the same failure.
  type Row = { name: string; last_error: string };
  const url = controller.url;
  const { row, detail } = await waitFor("the list and the detail showing one failure", async () => {
    const list = (await (await fetch(`${url}/ui/api/objects`)).json()) as { rows: Row[] };
    const found = list.rows.find((r) => r.name === "alpha");
    const one = (await (await fetch(`${url}/ui/api/objects/Deployment/alpha`)).json()) as {
      object: { last_error: string };
    };
    return found && one.object.last_error.startsWith(found.last_error.slice(0, LIST_ERROR_CHARS))
      ? { row: found, detail: one }
      : null;
  });
  expect(row.last_error).toMatch(/… \(\d+ more characters: open the object\)$/);
  expect(row.last_error.length).toBeLessThan(LIST_ERROR_CHARS + 100);
  const kept = detail.object.last_error;
  // The echo fault answers a 400 or a 422 (whose field and message are each cut): whichever the
  // last attempt met, what is kept is bounded and says how much the server sent beyond it.
  expect(kept).toMatch(/^POST \/v2\/deployments /);
  expect(Number(/… \((\d+) more characters\)/.exec(kept)?.[1])).toBeGreaterThan(10_000);
  expect(kept.length).toBeGreaterThan(LIST_ERROR_CHARS + 100);
  expect(kept.length).toBeLessThan(10_000);
});
