/**
 * Possible duplicates: pairs of entries whose names, descriptions or bodies are close, for
 * a person to merge (memory/tidy.ts). Comparing every pair of 10,000 entries is 50 million
 * comparisons, so each entry is first reduced to a few features — its name's character
 * trigrams, its description's words, and a sketch of its body (the bottom-k hashes of its
 * word pairs, over at most the body's first BODY_SAMPLE_CHARACTERS) — and only entries
 * that share a feature few others have become candidates: a feature shared by more than
 * MAX_SHARED entries ("the", a group's name, a template's boilerplate) says nothing and is
 * left out. Candidates are found rarest feature first, at most MAX_CANDIDATES of them in at
 * most MAX_VISITS steps; each is then scored field by field from the features alone. The
 * cost grows with the entries' bytes examined, never with the square of their number.
 *
 * Pure and deterministic: the same entries, in any order, give the same pairs.
 */

import { searchWords } from './search-words.js';

/** Characters of a body examined: its first 16 KiB or so (an entry's start says what it is). */
export const BODY_SAMPLE_CHARACTERS = 16 * 1024;
/** Hashes kept in a body's sketch: the estimate of two bodies' resemblance is within some ±0.07 of it. */
export const SKETCH_SIZE = 48;
/** A feature shared by more entries than this is too common to suggest a pair. */
export const MAX_SHARED = 32;
/** Candidate pairs scored at most; past it, the listing is truncated. */
export const MAX_CANDIDATES = 20_000;
/** Pairs of entries looked at while finding candidates (a pair sharing ten features counts ten times), at most. */
export const MAX_VISITS = 400_000;

/** A name whose similarity reaches this is close (`project/alpha` and `projects/alpha`: 0.98; `areas/alpha` and `areas/alphas`: 0.81). */
export const NAME_CLOSE = 0.8;
/** A description whose similarity reaches this is close ("Coffee preferences", "Coffee preference": 0.91). */
export const DESCRIPTION_CLOSE = 0.8;
/** Bodies whose estimated resemblance reaches this are close (a page with a few words changed). */
export const BODY_CLOSE = 0.6;

/** How much of a name's similarity its group makes (the rest is its slug's: `topics/a` and `topics/b` are not close). */
const GROUP_WEIGHT = 0.3;
/**
 * What is left of a name's similarity when both slugs hold numbers and not the same ones:
 * `meeting-01` and `meeting-02` are a series, not a copy (`alpha` and `alpha-2` may be one).
 */
const OTHER_NUMBERS = 0.5;

/** The fields of an entry compared. */
export type DuplicateField = 'name' | 'description' | 'body';

/** How close two entries are, field by field, each 0 (nothing alike) to 1 (the same). */
export interface FieldSimilarity {
  readonly name: number;
  readonly description: number;
  readonly body: number;
}

/** What one entry is compared by. */
export interface EntryFeatures {
  readonly name: string;
  /** The part of the name before its first `/`. */
  readonly group: string;
  /** Trigram hashes of the group's words and of the slug's, sorted (repeats kept). */
  readonly groupTrigrams: Uint32Array;
  readonly slugTrigrams: Uint32Array;
  /** The runs of digits in the slug, joined by spaces. */
  readonly slugNumbers: string;
  /** The description's folded words, each once, in order. */
  readonly descriptionWords: readonly string[];
  /** The smallest SKETCH_SIZE hashes of the body's word pairs, ascending. */
  readonly sketch: Uint32Array;
  /** Characters of the body examined. */
  readonly examined: number;
}

export interface NearPair {
  /** The two entries' names, `a` first in code-point order. */
  readonly a: string;
  readonly b: string;
  /** Overall, 0 to 1: mostly the closest field's similarity, the others' adding a little. */
  readonly score: number;
  /** The fields close enough to list the pair, in the order name, description, body. */
  readonly reasons: readonly DuplicateField[];
  readonly similarity: FieldSimilarity;
}

export interface NearDuplicates {
  /** At most `limit` pairs, highest score first, then by names in code-point order. */
  readonly pairs: readonly NearPair[];
  /** More pairs were close than listed, or the candidates were cut at MAX_CANDIDATES or MAX_VISITS. */
  readonly truncated: boolean;
  /** The work done: candidate pairs scored, and pairs visited finding them. */
  readonly work: { readonly candidates: number; readonly visits: number };
}

/** The features of an entry; only the body's first BODY_SAMPLE_CHARACTERS are read. */
export function entryFeatures(name: string, description: string, body: string): EntryFeatures {
  const slash = name.indexOf('/');
  const group = slash < 0 ? '' : name.slice(0, slash);
  const slug = name.slice(slash + 1);
  const sample = body.length > BODY_SAMPLE_CHARACTERS ? body.slice(0, BODY_SAMPLE_CHARACTERS) : body;
  return {
    name,
    group,
    groupTrigrams: trigramsOf(nameWords(group)),
    slugTrigrams: trigramsOf(nameWords(slug)),
    slugNumbers: slug.match(/\d+/g)?.join(' ') ?? '',
    descriptionWords: [...new Set(searchWords(description))],
    sketch: sketchOf(sample),
    examined: sample.length,
  };
}

/**
 * How close `a` and `b` are, field by field. Description words in `common` are left out
 * (those too many entries share); the name and body are compared whole.
 */
export function compare(a: EntryFeatures, b: EntryFeatures, common: ReadonlySet<string> = NONE): FieldSimilarity {
  const description = dice(descriptionTrigrams(a, common), descriptionTrigrams(b, common));
  return { ...compareNameAndBody(a, b), description };
}

function compareNameAndBody(a: EntryFeatures, b: EntryFeatures): Omit<FieldSimilarity, 'description'> {
  const group = a.group === b.group ? 1 : dice(a.groupTrigrams, b.groupTrigrams);
  const numbered = a.slugNumbers !== '' && b.slugNumbers !== '' && a.slugNumbers !== b.slugNumbers;
  const name = GROUP_WEIGHT * group + (1 - GROUP_WEIGHT) * dice(a.slugTrigrams, b.slugTrigrams);
  return { name: numbered ? OTHER_NUMBERS * name : name, body: resemblance(a.sketch, b.sketch) };
}

/** The fields close enough to list a pair. */
export function reasonsOf(similarity: FieldSimilarity): DuplicateField[] {
  const reasons: DuplicateField[] = [];
  if (similarity.name >= NAME_CLOSE) reasons.push('name');
  if (similarity.description >= DESCRIPTION_CLOSE) reasons.push('description');
  if (similarity.body >= BODY_CLOSE) reasons.push('body');
  return reasons;
}

/** One number for ordering pairs: two thirds the closest field, one third the mean of the three. */
export function scoreOf(similarity: FieldSimilarity): number {
  const { name, description, body } = similarity;
  return (2 * Math.max(name, description, body) + (name + description + body) / 3) / 3;
}

/** The `limit` pairs of `entries` that are closest, in any order: a DuplicateFinder given them by name. */
export function nearDuplicates(entries: readonly EntryFeatures[], limit: number): NearDuplicates {
  const finder = new DuplicateFinder();
  for (const entry of [...entries].sort((x, y) => byCodePoint(x.name, y.name))) finder.add(entry);
  return finder.find(limit);
}

/**
 * Finds the pairs among entries given one at a time, in code-point order of their names
 * (the order of a store's index), so that a service can read bodies in batches and keep
 * only their features. Adding indexes the entry's features; `find` (or `search`, in steps)
 * finds the candidates, the features held by fewest first (so that a cut keeps the
 * likeliest pairs), and scores them.
 */
export class DuplicateFinder {
  private readonly entries: EntryFeatures[] = [];
  /** Each feature's slot, by the feature's top 30 bits (a number V8 keeps small). */
  private readonly slots = new Map<number, number>();
  /** By slot: how many entries hold the feature (counted up to one past MAX_SHARED), and the last holding's place. */
  private holdersOf = new Int32Array(1024);
  private lastOf = new Int32Array(1024);
  /** By place: the entry holding the feature, and the feature's holding before it (-1: none). */
  private holderAt = new Int32Array(4096);
  private previousAt = new Int32Array(4096);
  private places = 0;
  /** How many entries hold each description word. */
  private readonly wordCounts = new Map<string, number>();

  /** Adds the next entry: its name after the last one's in code-point order. */
  add(entry: EntryFeatures): void {
    const last = this.entries.at(-1);
    if (last !== undefined && byCodePoint(last.name, entry.name) >= 0) {
      throw new Error(`entries must be added by name: ${entry.name} came after ${last.name}`);
    }
    const index = this.entries.length;
    this.entries.push(entry);
    // Shifted first, then made unique: two features one shift apart are one slot, held once (an entry is no pair of itself).
    for (const slot of new Set(featuresOf(entry).map((feature) => feature >>> 2))) this.hold(slot, index);
    for (const word of entry.descriptionWords) this.wordCounts.set(word, (this.wordCounts.get(word) ?? 0) + 1);
  }

  /** Records that entry `index` holds `feature`, unless more than MAX_SHARED entries already do. */
  private hold(feature: number, index: number): void {
    let slot = this.slots.get(feature);
    if (slot === undefined) {
      slot = this.slots.size;
      this.slots.set(feature, slot);
      if (slot === this.holdersOf.length) {
        this.holdersOf = grown(this.holdersOf);
        this.lastOf = grown(this.lastOf);
      }
      this.holdersOf[slot] = 0;
      this.lastOf[slot] = -1;
    }
    const holders = this.holdersOf[slot] as number;
    if (holders > MAX_SHARED) return;
    this.holdersOf[slot] = holders + 1;
    if (holders === MAX_SHARED) return;
    if (this.places === this.holderAt.length) {
      this.holderAt = grown(this.holderAt);
      this.previousAt = grown(this.previousAt);
    }
    this.holderAt[this.places] = index;
    this.previousAt[this.places] = this.lastOf[slot] as number;
    this.lastOf[slot] = this.places++;
  }

  /** The `limit` closest pairs of the entries added, and whether more were found or could have been. */
  find(limit: number): NearDuplicates {
    const steps = this.search(limit);
    for (;;) {
      const step = steps.next();
      if (step.done) return step.value;
    }
  }

  /**
   * `find` in steps of bounded work (STEP_WORK pairs visited or scored), yielding between
   * them: a service lets the event loop run there, so finding never holds it long.
   */
  *search(limit: number): Generator<void, NearDuplicates> {
    const common = new Set<string>();
    for (const [word, count] of this.wordCounts) if (count > MAX_SHARED) common.add(word);
    yield;
    const found = yield* this.candidates();
    const descriptions = new Map<number, Uint32Array>();
    const trigrams = (index: number) => {
      let cached = descriptions.get(index);
      if (cached === undefined) {
        cached = descriptionTrigrams(this.entries[index] as EntryFeatures, common);
        descriptions.set(index, cached);
      }
      return cached;
    };
    const pairs: NearPair[] = [];
    let scored = 0;
    for (const [i, j] of found.pairs) {
      if (++scored % STEP_WORK === 0) yield;
      const a = this.entries[i] as EntryFeatures;
      const b = this.entries[j] as EntryFeatures;
      const { name, body } = compareNameAndBody(a, b);
      const similarity = { name, description: dice(trigrams(i), trigrams(j)), body };
      const reasons = reasonsOf(similarity);
      if (reasons.length > 0) pairs.push({ a: a.name, b: b.name, score: scoreOf(similarity), reasons, similarity });
    }
    pairs.sort((x, y) => y.score - x.score || byCodePoint(x.a, y.a) || byCodePoint(x.b, y.b));
    return {
      pairs: pairs.slice(0, Math.max(0, limit)),
      truncated: found.cut || pairs.length > limit,
      work: { candidates: found.pairs.length, visits: found.visits },
    };
  }

  /** The holders (ascending) of each feature held by 2 to MAX_SHARED entries, by how many hold it, then in order of first holding. */
  private sharedFeatures(): Int32Array[][] {
    const bySharing: Int32Array[][] = Array.from({ length: MAX_SHARED + 1 }, () => []);
    for (let slot = 0; slot < this.slots.size; slot++) {
      const holders = this.holdersOf[slot] as number;
      if (holders < 2 || holders > MAX_SHARED) continue;
      const list = new Int32Array(holders);
      let place = this.lastOf[slot] as number;
      for (let at = holders - 1; at >= 0; at--) {
        list[at] = this.holderAt[place] as number;
        place = this.previousAt[place] as number;
      }
      bySharing[holders]?.push(list);
    }
    return bySharing;
  }

  /** The pairs (by index, first < second) sharing a feature held by 2 to MAX_SHARED entries, each once. */
  private *candidates(): Generator<void, { pairs: [number, number][]; visits: number; cut: boolean }> {
    const count = this.entries.length;
    const seen = new Set<number>();
    const pairs: [number, number][] = [];
    let visits = 0;
    const shared = this.sharedFeatures();
    yield;
    for (const lists of shared) {
      for (const list of lists) {
        for (let x = 0; x < list.length; x++) {
          for (let y = x + 1; y < list.length; y++) {
            if (visits === MAX_VISITS) return { pairs, visits, cut: true };
            if (++visits % STEP_WORK === 0) yield;
            const i = list[x] as number;
            const j = list[y] as number;
            const key = i * count + j;
            if (seen.has(key)) continue;
            if (pairs.length === MAX_CANDIDATES) return { pairs, visits, cut: true };
            seen.add(key);
            pairs.push([i, j]);
          }
        }
      }
    }
    return { pairs, visits, cut: false };
  }
}

/** Pairs visited or scored between two yields of `search`: some milliseconds of work. */
const STEP_WORK = 5_000;

/** Of a body's sketch, the smallest hashes that find it a candidate (two bodies alike share some of them). */
const SKETCH_FEATURES = 16;

/** `array` with twice the room, its values kept. */
function grown(array: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const larger = new Int32Array(array.length * 2);
  larger.set(array);
  return larger;
}

/** Salts that keep a name's, a description's and a body's features apart. */
const NAME_FEATURE = 0x9e3779b1;
const WORD_FEATURE = 0x85ebca77;

/**
 * What an entry is found by: its name's trigrams, its description's words, its sketch. A
 * description word held by more than MAX_SHARED entries is a common word: as a feature, it
 * is then too common to suggest a pair, and `find` leaves it out of the descriptions compared.
 */
function featuresOf(entry: EntryFeatures): number[] {
  const features: number[] = [];
  for (const trigram of entry.groupTrigrams) features.push(mix(trigram ^ NAME_FEATURE));
  for (const trigram of entry.slugTrigrams) features.push(mix(trigram ^ NAME_FEATURE));
  for (const word of entry.descriptionWords) features.push(hash(word, WORD_FEATURE));
  for (const value of entry.sketch.subarray(0, SKETCH_FEATURES)) features.push(value);
  return features;
}

const NONE: ReadonlySet<string> = new Set();

function descriptionTrigrams(entry: EntryFeatures, common: ReadonlySet<string>): Uint32Array {
  return trigramsOf(common.size === 0 ? entry.descriptionWords : entry.descriptionWords.filter((w) => !common.has(w)));
}

/** The words of a name or part of one: split at / - _ . and where lower case turns upper, in lower case. */
export function nameWords(part: string): string[] {
  return part
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[\s/\-_.]+/)
    .filter((word) => word !== '');
}

/** The hashes of each word's character trigrams, the word between ^ and $ (`a` is `^a$`), sorted. */
function trigramsOf(words: readonly string[]): Uint32Array {
  const trigrams: number[] = [];
  for (const word of words) {
    const marked = `^${word}$`;
    for (let i = 0; i + 3 <= marked.length; i++) trigrams.push(hash(marked.slice(i, i + 3), 0));
  }
  return Uint32Array.from(trigrams).sort();
}

/** Dice's coefficient of two sorted multisets: 1 when the same, 0 when nothing is shared (or both are empty). */
function dice(a: Uint32Array, b: Uint32Array): number {
  if (a.length + b.length === 0) return 0;
  let shared = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i] as number;
    const y = b[j] as number;
    if (x === y) {
      shared++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return (2 * shared) / (a.length + b.length);
}

/**
 * The SKETCH_SIZE smallest distinct hashes of the word pairs of `text` (of its one word,
 * for a text of one word), ascending. Words are runs of letters and digits, in lower case,
 * read in one pass without making a string of each: a body is the bulk of what is examined.
 */
function sketchOf(text: string): Uint32Array {
  const best: number[] = [];
  let words = 0;
  let previous = 0;
  let word = FNV_OFFSET;
  let inWord = false;
  for (let i = 0; i <= text.length; i++) {
    const code = i < text.length ? wordCode(text, i) : -1;
    if (code >= 0) {
      word = Math.imul(word ^ code, FNV_PRIME);
      inWord = true;
      continue;
    }
    if (!inWord) continue;
    const hashed = mix(word);
    if (words > 0) offer(best, mix(Math.imul(previous ^ PAIR_SALT, FNV_PRIME) ^ hashed));
    words++;
    previous = hashed;
    word = FNV_OFFSET;
    inWord = false;
  }
  if (words === 1) offer(best, previous);
  return Uint32Array.from(best);
}

const PAIR_SALT = 0x27d4eb2f;

/** Keeps `value` among the SKETCH_SIZE smallest of `best` (ascending, distinct). */
function offer(best: number[], value: number): void {
  if (best.length === SKETCH_SIZE && value >= (best[SKETCH_SIZE - 1] as number)) return;
  let at = best.length;
  while (at > 0 && (best[at - 1] as number) > value) at--;
  if (at > 0 && best[at - 1] === value) return;
  best.splice(at, 0, value);
  if (best.length > SKETCH_SIZE) best.pop();
}

const LETTER_OR_DIGIT = /[\p{L}\p{N}\p{M}]/u;

/** The code unit at `i` in lower case when it is part of a word (a letter, a digit, a mark, half of a pair); else -1. */
function wordCode(text: string, i: number): number {
  const code = text.charCodeAt(i);
  if (code < 0x80) {
    if (code >= 0x61 && code <= 0x7a) return code;
    if (code >= 0x41 && code <= 0x5a) return code + 0x20;
    return code >= 0x30 && code <= 0x39 ? code : -1;
  }
  if (code >= 0xd800 && code <= 0xdfff) return code;
  const char = text.charAt(i);
  return LETTER_OR_DIGIT.test(char) ? char.toLowerCase().charCodeAt(0) : -1;
}

/**
 * The estimated share of word pairs two bodies have in common (Jaccard), from their
 * sketches: of the smallest SKETCH_SIZE hashes of both together, how many each holds.
 */
function resemblance(a: Uint32Array, b: Uint32Array): number {
  let shared = 0;
  let taken = 0;
  let i = 0;
  let j = 0;
  while (taken < SKETCH_SIZE && (i < a.length || j < b.length)) {
    const x = i < a.length ? (a[i] as number) : Number.POSITIVE_INFINITY;
    const y = j < b.length ? (b[j] as number) : Number.POSITIVE_INFINITY;
    if (x === y) {
      shared++;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
    taken++;
  }
  return taken === 0 ? 0 : shared / taken;
}

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** FNV-1a over the UTF-16 code units of `text`, from `seed`, then mixed: 32 bits. */
function hash(text: string, seed: number): number {
  let h = FNV_OFFSET ^ seed;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), FNV_PRIME);
  return mix(h);
}

/** Murmur3's finaliser: every bit of the input moves about half the output's. */
function mix(value: number): number {
  let h = value >>> 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The order the finder takes entries in: UTF-16 code units, which is code points for names. */
export function byCodePoint(x: string, y: string): number {
  return x < y ? -1 : x > y ? 1 : 0;
}
