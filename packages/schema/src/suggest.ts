import { distance } from "fastest-levenshtein";

/**
 * The closest candidate to `input`, or undefined when none is close enough to be a
 * plausible typo or abbreviation (`q` → `query`, `pth` → `path`).
 */
export function closestMatch(input: string, candidates: readonly string[]): string | undefined {
  const needle = input.toLowerCase();
  let best: string | undefined;
  let bestScore = Number.POSITIVE_INFINITY;
  for (const candidate of candidates) {
    const hay = candidate.toLowerCase();
    let score: number;
    if (hay === needle) score = 0;
    else if (needle.length > 0 && (hay.startsWith(needle) || needle.startsWith(hay))) score = 0.5;
    else {
      let d = distance(needle, hay);
      // Two neighbouring letters swapped (`modle` → `model`) is one typo, not two.
      if (d === 2 && isTransposition(needle, hay)) d = 1;
      const limit = Math.max(1, Math.floor(Math.max(needle.length, hay.length) / 3));
      if (d > limit) continue;
      score = d;
    }
    if (score < bestScore) {
      bestScore = score;
      best = candidate;
    }
  }
  return best;
}

function isTransposition(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return i < a.length - 1 && a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
}
