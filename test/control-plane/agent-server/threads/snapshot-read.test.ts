import { expect, it } from "vitest";
import { readCrons } from "../../../../src/control-plane/agent-server/crons/cron-store.js";
import { readStoreItems } from "../../../../src/control-plane/agent-server/memory/memory-store.js";
import { readAssistants } from "../../../../src/control-plane/agent-server/store.js";

// Each part of a saved snapshot is read whole: absent (an older snapshot) is empty, a damaged list
// is state-corrupt naming the part, never half-loaded.

const parts = [
  { read: readAssistants, field: "assistants", good: { assistant_id: "a", graph_id: "agent" } },
  { read: readStoreItems, field: "store", good: { namespace: ["n"], key: "k", value: {} } },
  { read: readCrons, field: "crons", good: { cron_id: "c", schedule: "* * * * *" } },
] as const;

it.each(parts)(
  "$field: absent is empty, valid is read, damaged is state-corrupt",
  ({ read, field, good }) => {
    expect(read({ version: 1 })).toEqual({});
    expect(read({ [field]: { dep: [good] } })).toEqual({ dep: [good] });
    expect(() => read({ [field]: { dep: [good, { nonsense: true }] } })).toThrow(
      expect.objectContaining({ code: "state-corrupt" }),
    );
    expect(() => read({ [field]: [] })).toThrow(expect.objectContaining({ code: "state-corrupt" }));
  },
);
