/**
 * "Did you mean" support: edit distance between short strings, used to suggest close
 * entry names and to quote the body line closest to an `old` text that was not found.
 *
 * Every request's cost is bounded (DESIGN §7: no request blocks the event loop for
 * more than 50 ms): strings are cut to 256 characters before an edit distance, and a
 * name is compared in full only against the few candidates that share the most
 * character pairs with it, found in one linear pass over all names.
 */

/** Characters compared by edit distance; longer strings are cut. */
const DISTANCE_LIMIT = 256;

/** Rows of the edit-distance table, reused by every call (one call runs at a time). */
let previousRow = new Int32Array(DISTANCE_LIMIT + 1);
let currentRow = new Int32Array(DISTANCE_LIMIT + 1);

/** Levenshtein distance, with both inputs cut to DISTANCE_LIMIT characters to bound the cost. */
function editDistance(a: string, b: string): number {
  const left = a.length > DISTANCE_LIMIT ? a.slice(0, DISTANCE_LIMIT) : a;
  const right = b.length > DISTANCE_LIMIT ? b.slice(0, DISTANCE_LIMIT) : b;
  if (left === right) return 0;
  if (left.length === 0) return right.length;
  if (right.length === 0) return left.length;
  for (let j = 0; j <= right.length; j++) previousRow[j] = j;
  for (let i = 1; i <= left.length; i++) {
    currentRow[0] = i;
    const code = left.charCodeAt(i - 1);
    for (let j = 1; j <= right.length; j++) {
      const substitution = (previousRow[j - 1] as number) + (code === right.charCodeAt(j - 1) ? 0 : 1);
      const deletion = (previousRow[j] as number) + 1;
      const insertion = (currentRow[j - 1] as number) + 1;
      currentRow[j] = Math.min(substitution, deletion, insertion);
    }
    [previousRow, currentRow] = [currentRow, previousRow];
  }
  return previousRow[right.length] as number;
}

/** 1 for identical strings, towards 0 as they differ. */
export function similarity(a: string, b: string): number {
  const longest = Math.max(a.length, b.length, 1);
  return 1 - editDistance(a, b) / Math.min(longest, DISTANCE_LIMIT);
}

/** Candidates compared in full per name: those sharing the most character pairs with it. */
const SHORTLIST = 16;

/** Index of a character in the pair table: the name alphabet, the word edges, and one slot for the rest. */
const ALPHABET = '^$abcdefghijklmnopqrstuvwxyz0123456789-._';
const SLOTS = ALPHABET.length + 1;
const slotOf = new Uint8Array(128).fill(ALPHABET.length);
for (let i = 0; i < ALPHABET.length; i++) slotOf[ALPHABET.charCodeAt(i)] = i;

function slot(code: number): number {
  return code < 128 ? (slotOf[code] as number) : ALPHABET.length;
}

/** Character pairs of `^word$`, as indexes into a SLOTS × SLOTS table. */
function pairs(word: string): number[] {
  const found: number[] = [];
  let before = slot(0x5e);
  for (let i = 0; i <= word.length; i++) {
    const here = i < word.length ? slot(word.charCodeAt(i)) : slot(0x24);
    found.push(before * SLOTS + here);
    before = here;
  }
  return found;
}

/** Counts, in one linear pass each, the character pairs candidates share with a target. */
class PairOverlap {
  private readonly wanted = new Int16Array(SLOTS * SLOTS);
  private readonly taken = new Int16Array(SLOTS * SLOTS);
  private readonly seenIn = new Int32Array(SLOTS * SLOTS);
  private round = 0;
  private readonly targetPairs: number[];

  constructor(target: string) {
    this.targetPairs = pairs(target);
    for (const pair of this.targetPairs) this.wanted[pair] = (this.wanted[pair] as number) + 1;
  }

  /** Dice coefficient of the two pair multisets: 1 for the same pairs, 0 for none in common. */
  dice(candidate: string): number {
    this.round++;
    let shared = 0;
    const candidatePairs = pairs(candidate);
    for (const pair of candidatePairs) {
      if (this.seenIn[pair] !== this.round) {
        this.seenIn[pair] = this.round;
        this.taken[pair] = 0;
      }
      if ((this.taken[pair] as number) < (this.wanted[pair] as number)) {
        this.taken[pair] = (this.taken[pair] as number) + 1;
        shared++;
      }
    }
    return (2 * shared) / (this.targetPairs.length + candidatePairs.length);
  }
}

/** Keeps the `size` items of highest rank seen so far. */
function keepBest<T>(best: { item: T; rank: number }[], item: T, rank: number, size: number): void {
  if (best.length === size && rank <= (best[size - 1] as { rank: number }).rank) return;
  let at = best.length;
  while (at > 0 && (best[at - 1] as { rank: number }).rank < rank) at--;
  best.splice(at, 0, { item, rank });
  if (best.length > size) best.pop();
}

/**
 * Up to `max` candidates that resemble `target`, best first. Slugs are compared (a
 * shared group alone says nothing); a candidate in the same group wins ties, and one
 * whose slug contains the target's slug (or is contained in it) counts as close.
 * Only a shortlist — the candidates sharing the most character pairs with the target,
 * and the first that contain it — is scored by edit distance, so the cost grows
 * linearly with the number of candidates.
 */
export function closest(target: string, candidates: Iterable<string>, max = 3): string[] {
  const [group, slug] = splitName(target);
  const overlap = new PairOverlap(slug);
  const byPairs: { item: string; rank: number }[] = [];
  const containing: string[] = [];
  for (const candidate of candidates) {
    if (candidate === target) continue;
    const candidateSlug = splitName(candidate)[1];
    keepBest(byPairs, candidate, overlap.dice(candidateSlug), SHORTLIST);
    if (
      containing.length < SHORTLIST &&
      slug.length >= 3 &&
      (candidateSlug.includes(slug) || slug.includes(candidateSlug))
    ) {
      containing.push(candidate);
    }
  }
  const shortlist = new Set([...byPairs.map((entry) => entry.item), ...containing]);
  const scored: { candidate: string; score: number }[] = [];
  for (const candidate of shortlist) {
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
