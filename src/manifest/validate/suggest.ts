import { closest, distance } from "fastest-levenshtein";

// "Did you mean": the closest of the known words to a misspelt one, when it is close enough.

export function suggest(word: string, candidates: readonly string[]): string {
  if (candidates.length === 0) return "";
  const best = closest(word, [...candidates]);
  return distance(word, best) <= Math.max(2, Math.floor(word.length / 3)) ? ` (did you mean "${best}"?)` : "";
}
