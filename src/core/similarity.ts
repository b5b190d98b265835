/**
 * "Did you mean" support: edit distance between short strings, used to suggest close
 * entry names and to quote the body line closest to an `old` text that was not found.
 */

/** Levenshtein distance, with both inputs cut to `limit` characters to bound the cost. */
function editDistance(a: string, b: string, limit = 256): number {
  const left = a.slice(0, limit);
  const right = b.slice(0, limit);
  if (left === right) return 0;
  if (left.length === 0) return right.length;
  if (right.length === 0) return left.length;
  let previous = Array.from({ length: right.length + 1 }, (_, i) => i);
  for (let i = 1; i <= left.length; i++) {
    const current = [i];
    for (let j = 1; j <= right.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (left[i - 1] === right[j - 1] ? 0 : 1);
      current[j] = Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution);
    }
    previous = current;
  }
  return previous[right.length] ?? 0;
}

/** 1 for identical strings, towards 0 as they differ. */
export function similarity(a: string, b: string): number {
  const longest = Math.max(a.length, b.length, 1);
  return 1 - editDistance(a, b) / Math.min(longest, 256);
}

/**
 * Up to `max` candidates that resemble `target`, best first. Slugs are compared (a
 * shared group alone says nothing); a candidate in the same group wins ties, and one
 * whose slug contains the target's slug (or is contained in it) counts as close.
 */
export function closest(target: string, candidates: Iterable<string>, max = 3): string[] {
  const [group, slug] = splitName(target);
  const scored: { candidate: string; score: number }[] = [];
  for (const candidate of candidates) {
    if (candidate === target) continue;
    const [candidateGroup, candidateSlug] = splitName(candidate);
    let score = similarity(slug, candidateSlug);
    if (slug.length >= 3 && (candidateSlug.includes(slug) || slug.includes(candidateSlug))) {
      score = Math.max(score, 0.75);
    }
    if (candidateGroup === group) score += 0.05;
    if (score >= 0.5) scored.push({ candidate, score });
  }
  scored.sort((x, y) => y.score - x.score || x.candidate.localeCompare(y.candidate));
  return scored.slice(0, max).map((item) => item.candidate);
}

function splitName(name: string): [string, string] {
  const slash = name.indexOf('/');
  return slash < 0 ? ['', name] : [name.slice(0, slash), name.slice(slash + 1)];
}
