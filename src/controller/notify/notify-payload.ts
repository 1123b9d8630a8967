// What a notification says: the event, a `text` line for Slack-compatible receivers, a link to the
// object on the status page and the time. Pure.

export type NotifyEventName =
  | "applied"
  | "failed"
  | "drift-detected"
  | "drift-healed"
  | "pruned"
  | "prune-blocked"
  | "lock-lost"
  | "promotion-ready";

export type NotifyEvent = {
  event: NotifyEventName;
  object: { kind: string; name: string } | null;
  id: string | null;
  revision: string | null;
  /** Fields that changed or drifted (dotted API paths); never values. */
  fields: string[];
  message: string;
  /** With environments: the environment whose store the object is in. */
  environment?: string;
};

type NotifyPayload = NotifyEvent & { text: string; link: string | null; at: string; source: "plumb" };

const ICON: Record<NotifyEventName, string> = {
  applied: "✅",
  failed: "❌",
  "drift-detected": "⚠️",
  "drift-healed": "🔧",
  pruned: "🗑️",
  "prune-blocked": "⛔",
  "lock-lost": "🔒",
  "promotion-ready": "🚀",
};

/**
 * Slack's mrkdwn reads `<…>` as a link or a mention (`<!channel>`, `<https://evil|click here>`) and
 * `&` as the start of an entity: an object name or a server's message is text, so these three are
 * escaped as Slack documents (`&amp;`, `&lt;`, `&gt;`). The other receivers of this `text`
 * (Mattermost, Rocket.Chat, Discord's Slack endpoint) notify on a plain `@channel`, `@here`,
 * `@everyone` or `@user`: a zero-width space after each `@` keeps it text. A bidirectional
 * override or isolate is written as its escape (`\u202e`), so a message is not shown reordered.
 * Only `text` is escaped; the JSON fields stay as they are.
 */
const escapeSlackText = (text: string): string =>
  text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/@(?=\w)/g, "@\u200b")
    .replace(/[\u202a-\u202e\u2066-\u2069]/g, (c) => `\\u${c.charCodeAt(0).toString(16)}`);

/**
 * The most of a message an event carries. A server that quotes the request it refused (a 100 KB
 * value echoed in every form) made one failure a 968 KB event, kept up to 1,000 times per receiver
 * while it is down and posted to a chat that shows a screen of it at most.
 */
export const MAX_MESSAGE_CHARS = 2_000;

/** `message` cut to MAX_MESSAGE_CHARS, saying how much was left out (never half a surrogate pair). */
function shortMessage(message: string): string {
  if (message.length <= MAX_MESSAGE_CHARS) return message;
  const kept = message.slice(0, MAX_MESSAGE_CHARS).replace(/[\ud800-\udbff]$/, "");
  return `${kept}… (${message.length - kept.length} more characters not sent)`;
}

export function buildNotifyPayload(
  event: NotifyEvent,
  pageUrl: string | undefined,
  now: number,
): NotifyPayload {
  const where = event.environment ? ` in ${event.environment}` : "";
  const what = `${event.object ? `${event.object.kind} ${event.object.name}` : "controller"}${where}`;
  const fields = event.fields.length > 0 ? ` (${event.fields.join(", ")})` : "";
  const message = shortMessage(event.message);
  const link =
    pageUrl && event.object
      ? `${pageUrl.replace(/\/$/, "")}/#/object/${encodeURIComponent(event.object.kind)}/${encodeURIComponent(event.object.name)}`
      : (pageUrl ?? null);
  return {
    source: "plumb",
    ...event,
    message,
    text: `${ICON[event.event]} plumb: ${escapeSlackText(`${what} ${event.event}${fields}: ${message}`)}`,
    link,
    at: new Date(now).toISOString(),
  };
}
