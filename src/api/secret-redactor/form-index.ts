import { lowerEach, spellings } from "../transport/escaped-text.js";
import { echoForms } from "./echo-forms.js";
import { MIN_PREFIX, MIN_VALUE_LENGTH } from "./redaction-limits.js";

// The index of every value's forms a redaction searches for, by their first and last 8 characters.

/** A value's spellings (escaped-text.ts) long enough to search for. */
const spelled = (value: string): string[] =>
  spellings(value).filter((form) => form.length >= MIN_VALUE_LENGTH);

export type Index = {
  /** Forms of 8+ characters by their first 8: found whole or cut to 8+ characters. */
  anchors: Map<string, string[]>;
  /** The same by their last 8: found cut at the start (an excerpt's "...tail", pydantic's `'head...tail'`). */
  tails: Map<string, string[]>;
  /** Shorter forms: found whole only. */
  short: string[];
};

function buildIndex(values: Iterable<string>, formsOf: (value: string) => string[]): Index {
  const anchors = new Map<string, string[]>();
  const tails = new Map<string, string[]>();
  const short: string[] = [];
  const file = (map: Map<string, string[]>, key: string, form: string) => {
    const list = map.get(key);
    if (list) list.push(form);
    else map.set(key, [form]);
  };
  for (const value of values) {
    for (const form of formsOf(value)) {
      if (form.length < MIN_PREFIX) {
        short.push(form);
        continue;
      }
      // A flat copy: a slice would keep the whole form alive through the map key.
      file(anchors, [...form.slice(0, MIN_PREFIX)].join(""), form);
      file(tails, [...form.slice(-MIN_PREFIX)].join(""), form);
    }
  }
  return { anchors, tails, short };
}

/** The forms of every value; its spellings as they are, and in lower case. */
export type Indexes = { forms: Index; spellings: Index; lower: Index };

export function buildIndexes(values: Set<string>): Indexes {
  return {
    forms: buildIndex(values, echoForms),
    spellings: buildIndex(values, spelled),
    lower: buildIndex(values, (value) => [...new Set(spelled(value).map(lowerEach))]),
  };
}
