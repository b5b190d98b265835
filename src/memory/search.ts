/**
 * Full-text search for people (the web UI, `engram search`, GET /api/search), never for
 * the model, whose three tools stay as they are. Here, once for every backend: how a
 * query becomes words and its bounds, what an entry matching them is, how hits rank, and
 * the snippets shown with each hit — plain text with the places of the matched words,
 * for the reader to escape and highlight. A backend only finds and orders (SearchStore
 * in store.ts), then builds each hit with `searchHit`.
 *
 * A query matches an entry when each of its words is a word of the entry's name,
 * description or body, the last word as the start of one (as you type). Hits rank by
 * where all the words are: in the name first, else in the description, else the rest;
 * then the most recently updated first, then by name.
 */

import { EngramError } from './model/errors.js';
import { searchWords, type WordAt, wordsAt } from './model/search-words.js';

/** Characters of a query, at most. */
export const SEARCH_QUERY_CAP = 200;
/** Distinct words of a query, at most. */
export const SEARCH_WORD_CAP = 8;
/** Hits of one search, at most; a larger limit is read as this. */
export const SEARCH_LIMIT_CAP = 50;
/** Hits of one search when no limit is given. */
export const SEARCH_DEFAULT_LIMIT = 20;
/** Characters of a snippet's text, at most (with the "…" marking a cut). */
export const SNIPPET_LENGTH = 160;
/** Characters a body snippet keeps before its first match, about. */
const LEAD = 40;
/** What a snippet does not begin or end with: spaces, new lines, control characters. */
const BLANK = /[\s\p{Cc}]/u;

/**
 * A query's words, folded (search-words.ts), distinct, 1 to SEARCH_WORD_CAP of them; the
 * last one matches as the start of a word.
 */
export type SearchTerms = readonly string[];

export type SearchField = 'name' | 'description' | 'body';

/** Part of one field of a hit: its text (one line) and where the query's words are in it. */
export interface SearchSnippet {
  readonly field: SearchField;
  /** Plain text, not markup, trimmed: control characters are spaces; "…" marks where it was cut. */
  readonly text: string;
  /** Each matched word as [start, end) in UTF-16 code units of `text`, in order. */
  readonly matches: readonly (readonly [number, number])[];
}

export interface SearchHit {
  readonly name: string;
  readonly description: string;
  /** The entry's last update, ms since the epoch. */
  readonly updated: number;
  /** One per field that holds a matched word, in the order name, description, body. */
  readonly snippets: readonly SearchSnippet[];
}

/** What a hit is built from: the live entry's stored values. */
export interface SearchedEntry {
  readonly name: string;
  readonly description: string;
  readonly body: string;
  readonly updated: number;
}

/** The words to look for in `query`, or INVALID_ARGUMENT saying what is wrong with it. */
export function parseSearch(query: string): SearchTerms {
  if (query.trim() === '') {
    throw new EngramError(
      'INVALID_ARGUMENT',
      'the search is empty: give a word, or the start of one, to find in names, descriptions and bodies.',
    );
  }
  if (query.length > SEARCH_QUERY_CAP) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `the search is ${query.length} characters long; at most ${SEARCH_QUERY_CAP} are searched: keep only the words you look for.`,
    );
  }
  const words = searchWords(query);
  // Distinct, keeping the last of each: the query's last word stays last (it is the prefix).
  const terms = words.filter((word, at) => words.indexOf(word, at + 1) === -1);
  if (terms.length === 0) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      'the search has no word to look for: only letters and digits are searched, punctuation and symbols are not.',
    );
  }
  if (terms.length > SEARCH_WORD_CAP) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `the search has ${terms.length} words; at most ${SEARCH_WORD_CAP} are searched at once: keep the ones that matter.`,
    );
  }
  return terms;
}

/** How many hits to return: SEARCH_DEFAULT_LIMIT when not given, at most SEARCH_LIMIT_CAP; a positive whole number. */
export function searchLimit(limit: number | undefined): number {
  if (limit === undefined) return SEARCH_DEFAULT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1) {
    throw new EngramError('INVALID_ARGUMENT', `the limit of a search is a whole number from 1 to ${SEARCH_LIMIT_CAP}.`);
  }
  return Math.min(limit, SEARCH_LIMIT_CAP);
}

/** Whether `word` (folded) is the term at `index` of `terms`: equal to it, or starting with it for the last. */
function isTerm(word: string, terms: SearchTerms, index: number): boolean {
  const term = terms[index]!;
  return index === terms.length - 1 ? word.startsWith(term) : word === term;
}

function matchesAny(word: string, terms: SearchTerms): boolean {
  return terms.some((_, index) => isTerm(word, terms, index));
}

/** Whether every term is among `words`. */
function hasAll(words: readonly string[], terms: SearchTerms): boolean {
  return terms.every((_, index) => words.some((word) => isTerm(word, terms, index)));
}

/**
 * Where an entry ranks for `terms` (0: all in the name, 1: all in the description,
 * 2: found across its fields), or undefined when it does not match. For a backend that
 * matches in process; SQL backends rank the same way in their queries.
 */
export function searchRank(entry: SearchedEntry, terms: SearchTerms): 0 | 1 | 2 | undefined {
  const name = searchWords(entry.name);
  if (hasAll(name, terms)) return 0;
  const description = searchWords(entry.description);
  if (hasAll(description, terms)) return 1;
  return hasAll([...name, ...description, ...searchWords(entry.body)], terms) ? 2 : undefined;
}

/** The hit for a matching entry: its name, description, last update and a snippet per field that holds a match. */
export function searchHit(entry: SearchedEntry, terms: SearchTerms): SearchHit {
  const fields: [SearchField, string][] = [
    ['name', entry.name],
    ['description', entry.description],
    ['body', entry.body],
  ];
  return {
    name: entry.name,
    description: entry.description,
    updated: entry.updated,
    snippets: fields.flatMap(([field, text]) => snippet(field, text, terms) ?? []),
  };
}

/**
 * At most SNIPPET_LENGTH characters of `text` around its first matched word (from about
 * LEAD characters before it), cut at spaces where it can, with the matched words that
 * fit; undefined when no word of `text` matches.
 */
function snippet(field: SearchField, text: string, terms: SearchTerms): SearchSnippet | undefined {
  const found = wordsAt(text).filter(({ word }) => matchesAny(word, terms));
  const first = found[0];
  if (!first) return undefined;
  let start = 0;
  let end = text.length;
  if (text.length > SNIPPET_LENGTH) {
    // Room for the two "…" marking the cuts.
    const room = SNIPPET_LENGTH - 2;
    start = Math.max(0, Math.min(first.start - LEAD, text.length - room));
    if (start > 0) start = spaceAfter(text, start, first.start);
    end = Math.min(text.length, start + room);
    if (end < text.length) end = spaceBefore(text, end, Math.min(first.end, end));
    // A cut inside a pair of UTF-16 units leaves that character out, keeping the length.
    if (insidePair(text, start)) start += 1;
    if (insidePair(text, end)) end -= 1;
  }
  const head = start > 0 ? '…' : '';
  const tail = end < text.length ? '…' : '';
  // No blank at either end (a body's last new line), whether cut there or not.
  while (start < end && BLANK.test(text[start]!)) start += 1;
  while (end > start && BLANK.test(text[end - 1]!)) end -= 1;
  const shift = head.length - start;
  return {
    field,
    // One UTF-16 unit for one: every control character (new lines, tabs) becomes a space, the places stay.
    text: head + text.slice(start, end).replace(/\p{Cc}/gu, ' ') + tail,
    matches: found
      .filter((at: WordAt) => at.start >= start && at.end <= end)
      .map((at) => [at.start + shift, at.end + shift] as const),
  };
}

/** The place just after the first space in text[from, limit), else `from`. */
function spaceAfter(text: string, from: number, limit: number): number {
  const space = text.slice(from, limit).search(/\s/u);
  return space === -1 ? from : from + space + 1;
}

/** The place of the last space in text[limit, to), else `to`. */
function spaceBefore(text: string, to: number, limit: number): number {
  const space = text.slice(limit, to).search(/\s\S*$/u);
  return space === -1 ? to : limit + space;
}

/** Whether a cut at `at` would split a pair of UTF-16 units (a surrogate pair). */
function insidePair(text: string, at: number): boolean {
  const code = text.charCodeAt(at);
  return at > 0 && at < text.length && code >= 0xdc00 && code <= 0xdfff;
}
