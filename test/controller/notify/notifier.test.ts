import { afterEach, describe, expect, it } from "vitest";
import { startControllerNotifier } from "../../../src/controller/notify/start-notifier.js";
import { PlumbError } from "../../../src/errors.js";
import { createGitStop, type GitStop } from "../../../src/git/stoppable-git.js";
import { lapsedError } from "../../../src/lock/fence.js";
import { createNotifier, signNotification } from "../../../src/controller/notify/notifier.js";
import type { NotifyEvent } from "../../../src/controller/notify/notify-payload.js";
import { systemTimers } from "../../../src/controller/queue/work-queue.js";
import { memoryLogger, waitFor } from "../support.js";
import { startReceiver } from "../notify-receiver.js";

const event: NotifyEvent = {
  event: "applied",
  object: { kind: "Deployment", name: "triage-agent" },
  id: "dep-1",
  revision: "rev-2",
  fields: ["source_revision_config.image_uri"],
  message: "updated and converged",
};

const receivers: Array<{ close(): Promise<void> }> = [];
afterEach(async () => {
  for (const r of receivers.splice(0)) await r.close();
});

async function receiver(...args: Parameters<typeof startReceiver>) {
  const r = await startReceiver(...args);
  receivers.push(r);
  return r;
}

function notifier(urls: string[], extra: Partial<Parameters<typeof createNotifier>[0]> = {}) {
  const log = memoryLogger();
  const counts: string[] = [];
  const n = createNotifier({
    urls,
    timers: systemTimers,
    log: log.logger,
    backoffBaseMs: 5,
    counted: (e, result) => counts.push(`${e}:${result}`),
    ...extra,
  });
  return { n, log, counts };
}

describe("--notify deliveries", () => {
  it("POSTs the event as JSON with a Slack-readable text, a link to the object and an HMAC signature", async () => {
    const r = await receiver();
    const { n, counts } = notifier([`${r.url}/hook`], {
      secret: "notify-s3cret",
      pageUrl: "https://plumb.example.com/",
    });
    n.notify(event);
    await n.drain(5_000);
    expect(r.deliveries).toHaveLength(1);
    const [d] = r.deliveries;
    expect(d!.path).toBe("/hook");
    expect(d!.headers["content-type"]).toBe("application/json");
    expect(d!.headers["x-plumb-signature"]).toBe(signNotification("notify-s3cret", d!.body));
    expect(d!.json).toMatchObject({
      source: "plumb",
      event: "applied",
      object: { kind: "Deployment", name: "triage-agent" },
      id: "dep-1",
      revision: "rev-2",
      fields: ["source_revision_config.image_uri"],
      link: "https://plumb.example.com/#/object/Deployment/triage-agent",
    });
    expect(d!.json.text).toBe(
      "✅ plumb: Deployment triage-agent applied (source_revision_config.image_uri): updated and converged",
    );
    expect(counts).toEqual(["applied:sent"]);
  });

  it("sends no signature header without a secret, and one delivery per URL", async () => {
    const a = await receiver();
    const b = await receiver();
    const { n } = notifier([a.url, b.url]);
    n.notify(event);
    await n.drain(5_000);
    expect(a.deliveries).toHaveLength(1);
    expect(b.deliveries).toHaveLength(1);
    expect(a.deliveries[0]!.headers["x-plumb-signature"]).toBeUndefined();
  });

  it("retries 5xx, 429 and no answer with backoff, and gives up on other 4xx at once", async () => {
    const flaky = await receiver((n) => (n < 2 ? 503 : 200));
    const refusing = await receiver(() => 404);
    const { n, counts, log } = notifier([flaky.url, refusing.url, "http://127.0.0.1:1/closed"], {
      retries: 2,
    });
    n.notify(event);
    await n.drain(10_000);
    expect(flaky.deliveries).toHaveLength(3);
    expect(new Set(flaky.deliveries.map((d) => d.body)).size).toBe(1); // the same event each time
    expect(refusing.deliveries).toHaveLength(1);
    expect(counts.sort()).toEqual(["applied:failed", "applied:failed", "applied:sent"]);
    // The log names the receiver's origin only: webhook URLs carry secrets in their path.
    expect(log.text()).toContain("notification not delivered");
    expect(log.text()).not.toContain("/closed");
  });

  it("never follows a redirect: the delivery fails at once, says so, and the other host gets nothing", async () => {
    const elsewhere = await receiver();
    const permanent = await receiver(() => ({
      status: 307,
      headers: { location: `${elsewhere.url}/stolen` },
    }));
    const found = await receiver(() => ({ status: 302, headers: { location: `${elsewhere.url}/stolen` } }));
    const { n, counts, log } = notifier([permanent.url, found.url], { secret: "notify-s3cret" });
    n.notify(event);
    await n.drain(10_000);
    expect(elsewhere.deliveries).toHaveLength(0); // neither the body nor the signature went there
    expect(permanent.deliveries).toHaveLength(1); // a redirect is not retried
    expect(found.deliveries).toHaveLength(1);
    expect(counts).toEqual(["applied:failed", "applied:failed"]);
    expect(log.text()).toContain(`HTTP 307 redirect to ${elsewhere.url} not followed`);
    expect(log.text()).toContain(`HTTP 302 redirect to ${elsewhere.url} not followed`);
    expect(log.text()).not.toContain("/stolen");
    expect(log.text()).not.toContain("updated and converged"); // the body stays out of the log
  });

  it("a redirect whose origin repeats the webhook URL's secret (path, query, password) is not named", async () => {
    const secret = "Xsecretpath1234";
    const query = "qsecret98765";
    const password = "pwsecret4321";
    // The receiver is http: `https:PATH` (another scheme) and `//PATH.host` make the echo the host.
    const echoes = [`https:${secret}`, `//${secret}.hooks.example/`, `https://${query}.evil.example/`];
    const echoing = await receiver((n, req) => {
      const location = (req.url ?? "").includes("pw") ? `//${password}.example/` : echoes[n % echoes.length]!;
      return { status: 302, headers: { location } };
    });
    const hooks = [1, 2, 3].map(() => `${echoing.url}/services/T0AAAA/${secret}?token=${query}`);
    const withPassword = `${echoing.url.replace("//", `//user:${password}@`)}/pw`;
    const { n, counts, log } = notifier([...hooks, withPassword]);
    n.notify(event);
    await n.drain(10_000);
    expect(echoing.deliveries).toHaveLength(4);
    expect(counts).toEqual(Array(4).fill("applied:failed"));
    expect(log.text()).toContain(
      "redirect to an origin not shown (it repeats part of the --notify URL) not followed",
    );
    for (const part of [secret, query, password])
      expect(log.text().toLowerCase()).not.toContain(part.toLowerCase());
  });

  it("gives each receiver its own slots: one that never answers delays no other", async () => {
    const hung = await receiver(() => "hang");
    const healthy = await receiver();
    const { n, counts } = notifier([hung.url, healthy.url], { timeoutMs: 60_000, retries: 0 });
    for (let i = 0; i < 12; i++) n.notify({ ...event, message: `m${i}` });
    // Every event reaches the healthy receiver while the hung one still holds its 4 slots, long
    // before its 60 s timeout: nothing of the hung receiver has ended yet.
    await waitFor("12 deliveries to the healthy receiver, answered", () => counts.length === 12);
    await waitFor("4 deliveries in flight to the hung receiver", () => hung.deliveries.length === 4);
    const messages = healthy.events().map((e) => String(e.message));
    expect(messages.sort()).toEqual(Array.from({ length: 12 }, (_, i) => `m${i}`).sort());
    expect(hung.deliveries).toHaveLength(4);
    expect(counts).toEqual(Array.from({ length: 12 }, () => "applied:sent"));
  });

  it("bounds pending deliveries per receiver: a hung one drops only its own events", async () => {
    const hung = await receiver(() => "hang");
    const healthy = await receiver();
    const { n, counts } = notifier([hung.url, healthy.url], { timeoutMs: 60_000, retries: 0 });
    for (let i = 0; i < 600; i++) n.notify({ ...event, message: `m${i}` });
    // 1,010 HTTP deliveries: 3.8 s at load 15, over 10 s in a run at load 20 (bounds for that).
    await waitFor("600 deliveries to the healthy receiver", () => healthy.deliveries.length === 600, 45_000);
    expect(counts.filter((c) => c === "applied:dropped")).toHaveLength(0);
    for (let i = 600; i < 1_010; i++) n.notify({ ...event, message: `m${i}` });
    await waitFor(
      "1,010 deliveries to the healthy receiver",
      () => healthy.deliveries.length === 1_010,
      45_000,
    );
    expect(counts.filter((c) => c === "applied:dropped")).toHaveLength(10); // the hung receiver's
  }, 120_000);

  it("escapes <, > and & in the Slack text, and only there", async () => {
    const r = await receiver();
    const { n } = notifier([r.url]);
    const message = "bad: <!channel> & <https://evil.example|click here>";
    n.notify({ ...event, event: "failed", object: { kind: "Deployment", name: "a<b>&c" }, message });
    await n.drain(5_000);
    const [sent] = r.events();
    expect(sent!.text).toBe(
      "❌ plumb: Deployment a&lt;b&gt;&amp;c failed (source_revision_config.image_uri): bad: &lt;!channel&gt; &amp; &lt;https://evil.example|click here&gt;",
    );
    expect(sent!.message).toBe(message);
    expect(sent!.object).toEqual({ kind: "Deployment", name: "a<b>&c" });
  });

  it("sends a URL's user name and password as Basic authorization, never in a log line", async () => {
    const r = await receiver();
    const url = r.url.replace("http://", "http://hook%40user:p%40ss-w0rd@");
    const { n, counts, log } = notifier([`${url}/hook?k=v`], { retries: 0 });
    n.notify(event);
    await n.drain(5_000);
    expect(counts).toEqual(["applied:sent"]);
    const [d] = r.deliveries;
    expect(d!.path).toBe("/hook?k=v");
    expect(d!.headers.authorization).toBe(`Basic ${Buffer.from("hook@user:p@ss-w0rd").toString("base64")}`);
    expect(JSON.stringify(log.lines())).not.toMatch(/p%40ss|p@ss|hook%40user/);
  });

  it("keeps @channel, @here, @everyone and @user in the Slack text from notifying anyone, and bidi overrides escaped", async () => {
    const r = await receiver();
    const { n } = notifier([r.url]);
    const message = "quota: @channel @here @everyone @all ping @ops-team, mail ops@example.com \u202egnp.exe";
    n.notify({ ...event, event: "failed", message });
    await n.drain(5_000);
    const [sent] = r.events();
    expect(sent!.text).not.toMatch(/@\w/);
    expect(String(sent!.text).replace(/\u200b/g, "")).toContain(message.replace("\u202e", "\\u202e"));
    expect(sent!.text).not.toContain("\u202e");
    expect(sent!.message).toBe(message);
  });

  it("never blocks its caller and drops what is over the bound, counted, when the receiver hangs", async () => {
    const hung = await receiver(() => "hang");
    const { n, counts } = notifier([hung.url], { timeoutMs: 60_000, retries: 0 });
    const started = Date.now();
    for (let i = 0; i < 1_010; i++) n.notify({ ...event, message: `m${i}` });
    expect(Date.now() - started).toBeLessThan(1_000); // notify() returns at once
    expect(counts.filter((c) => c === "applied:dropped")).toHaveLength(10);
    await waitFor("4 deliveries in flight", () => hung.deliveries.length === 4);
    const draining = Date.now();
    await n.drain(50); // shutdown does not wait for a dead receiver
    expect(Date.now() - draining).toBeLessThan(5_000);
  });
});

describe("the controller's notifier", () => {
  it("announces a lost state lock (no object) and links the status page", async () => {
    const r = await receiver();
    const lost = new AbortController();
    const counted: string[] = [];
    const n = startControllerNotifier({
      notify: { urls: [r.url] },
      pageUrl: () => "http://127.0.0.1:9400",
      lockLost: lost.signal,
      metrics: { notified: (event, result) => counted.push(`${event}:${result}`) },
      timers: systemTimers,
      log: memoryLogger().logger,
    });
    lost.abort(new Error("another controller took the lock"));
    await n!.drain(5_000);
    expect(r.events()).toEqual([
      expect.objectContaining({
        event: "lock-lost",
        object: null,
        link: "http://127.0.0.1:9400",
        message: expect.stringContaining("another controller took the lock"),
      }),
    ]);
    expect(counted).toEqual(["lock-lost:sent"]);
  });

  // Told to stop, with a status branch whose remote no longer answers, the lease lapses on the
  // controller's own clock: no one took the lock, it stopped as asked (docs/controller.md).
  it("sends no lock-lost for a lease lapsed at the stop while the git remote did not answer", async () => {
    const r = await receiver();
    const send = async (reason: unknown, gitStop: GitStop) => {
      const lost = new AbortController();
      const n = startControllerNotifier({
        notify: { urls: [r.url] },
        pageUrl: () => undefined,
        lockLost: lost.signal,
        gitStop,
        metrics: { notified: () => undefined },
        timers: systemTimers,
        log: memoryLogger().logger,
      });
      lost.abort(reason);
      await n!.drain(5_000);
    };
    const stopped = () => createGitStop(AbortSignal.abort(), 3_000);
    const silent = { ...stopped(), unanswered: true };
    const lapse = () => lapsedError("the lease of status branch plumb-status", 2_000);
    await send(lapse(), silent);
    expect(r.events()).toEqual([]);
    // A real loss still says so: taken by another writer at the stop, a lapse with the remote
    // answering, a lapse while leading.
    await send(new PlumbError("lock-lost", "another writer took it"), silent);
    await send(lapse(), stopped());
    await send(lapse(), { ...createGitStop(new AbortController().signal), unanswered: true });
    expect(r.events().map((e) => e["event"])).toEqual(["lock-lost", "lock-lost", "lock-lost"]);
  });

  it("is off without --notify URLs", async () => {
    const notifier = startControllerNotifier({
      notify: { urls: [] },
      pageUrl: () => undefined,
      lockLost: new AbortController().signal,
      metrics: { notified: () => undefined },
      timers: systemTimers,
      log: memoryLogger().logger,
    });
    expect(notifier).toBeUndefined();
  });
});
