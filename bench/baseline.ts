import { createHash } from "node:crypto";

// A fixed reference workload timed in the same run as the benches, so a figure can be compared
// across machines and runs: a figure of 3.0x baseline means the same on a slow or a fast machine.
// The work is what plumb's hot paths are made of: JSON and hashing of many small documents.

const DOCUMENTS = 20_000;

function referenceWork(): number {
  let checksum = 0;
  for (let i = 0; i < DOCUMENTS; i++) {
    const text = JSON.stringify({
      name: `agent-${i}`,
      spec: { image: `registry.example/a:${i}`, cpu: 0.5, env: [i, i + 1] },
    });
    const parsed = JSON.parse(text) as { name: string };
    checksum += createHash("sha256").update(parsed.name).update(text).digest()[0]!;
  }
  return checksum;
}

let measured: number | undefined;

/** The reference workload's time in ms: the median of 5 runs after a warm-up, measured once per process. */
export async function baselineMs(): Promise<number> {
  if (measured !== undefined) return measured;
  referenceWork();
  const times: number[] = [];
  for (let run = 0; run < 5; run++) {
    const started = performance.now();
    referenceWork();
    times.push(performance.now() - started);
    await new Promise((resolve) => setImmediate(resolve));
  }
  measured = times.sort((a, b) => a - b)[2]!;
  return measured;
}

/** "(12.3x baseline)" for a figure in ms. */
export async function baselineRatio(ms: number): Promise<string> {
  return `(${(ms / (await baselineMs())).toFixed(1)}x baseline)`;
}
