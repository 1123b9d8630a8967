// Requests sent in the last rate-limit window, for the status page's "budget use": one counter per
// second of the window, so memory stays fixed whatever the request rate.

export type RequestWindow = { sent(nowMs: number): void; count(nowMs: number): number };

export function createRequestWindow(windowMs: number): RequestWindow {
  const slots = Math.max(1, Math.ceil(windowMs / 1000));
  const counts = new Array<number>(slots).fill(0);
  const seconds = new Array<number>(slots).fill(-1);
  return {
    sent(nowMs) {
      const second = Math.floor(nowMs / 1000);
      const slot = second % slots;
      if (seconds[slot] !== second) {
        seconds[slot] = second;
        counts[slot] = 0;
      }
      counts[slot]!++;
    },
    count(nowMs) {
      const now = Math.floor(nowMs / 1000);
      let total = 0;
      for (let i = 0; i < slots; i++) if (now - seconds[i]! < slots) total += counts[i]!;
      return total;
    },
  };
}
