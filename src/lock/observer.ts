import type { Monotonic } from "./lock-types.js";

// A waiter's view of someone else's lease: it never compares the holder's timestamps with its own
// clock (clocks of two hosts, or a faketime'd process, disagree). The holder changes a token at every
// renewal (a counter, a commit); the waiter notes on its own monotonic clock when it first saw each
// token, and judges the lease expired only once the same token has been there for a whole lease (as
// client-go's leader election does). A skewed clock then delays a takeover by at most one lease and
// can never make it early.

export type Observer = {
  /** True once `token` has been seen unchanged for `leaseMs` of this process's monotonic time. */
  expired: (token: string, leaseMs: number) => boolean;
};

export function createObserver(monotonic: Monotonic): Observer {
  let seen: { token: string; at: number } | undefined;
  return {
    expired(token, leaseMs) {
      const now = monotonic();
      if (seen?.token !== token) seen = { token, at: now };
      return now - seen.at >= leaseMs;
    },
  };
}
