/**
 * What every importer from another memory system produces: an import plan. A source
 * (a folder of Markdown, the MCP memory server's JSONL, …) is parsed by its bridge into
 * drafts — a wanted name, a description and a body per item — and this file turns the
 * drafts into entries that obey the tools' rules: names made valid slugs, collisions and
 * duplicates resolved and reported, descriptions folded and within their cap, bodies
 * within the entry cap (or split into `-2`, `-3` entries when asked). The plan's entries
 * are then applied by Transfer.import, in one transaction, like an export document.
 *
 * Bridges are pure: they receive the files' bytes, or their text when a door was sent
 * text (reading them is the door's job), and refuse a file that is not what they read
 * with an INVALID_ARGUMENT saying where. A plan that would make more entries than the
 * entry cap is refused as soon as it gives out the first name too many.
 */

import { bodyOverCap, descriptionOverCap } from '../caps.js';
import { checkEntryCount } from '../edit.js';
import { EngramError, type ErrorDetail } from '../errors.js';
import { isValidSegment, isWritableName } from '../names.js';
import type { Policy } from '../policy.js';
import { foldDescription, normalizeNewlines, utf8Bytes, withoutByteOrderMark } from '../text.js';
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportDocument } from '../transfer.js';

/** One file of the source, as the door read it: its path relative to what was named, `/`-separated. */
export interface SourceFile {
  readonly path: string;
  readonly bytes: Uint8Array;
}

/** A file of the source: read from disk (bytes), or sent as text in a JSON body (REST), never encoded and decoded again. */
export type ImportFile = SourceFile | { readonly path: string; readonly text: string };

/** What an item of the source asks to become, before the rules are applied. */
export interface Draft {
  /** Where it came from, for the reader of the report: `people/ada.md`, `line 3`, `entity "Ada"`. */
  readonly source: string;
  /** The group, as the source names it (made a valid segment here). */
  readonly group: string;
  /** The slug, as the source names it (made a valid segment here). */
  readonly slug: string;
  readonly description: string;
  readonly body: string;
  /** What the bridge itself did to the item (a description it made up, …). */
  readonly notes?: readonly string[];
}

export interface ImportEntry {
  readonly name: string;
  readonly description: string;
  readonly body: string;
}

/** An item left out of the plan: a duplicate, too large to fit without --split, or a file that holds no entry. */
export type PlanProblem = 'duplicate' | 'too-large' | 'not-an-entry';

export interface PlanItem {
  readonly source: string;
  /** The entries it becomes: one, several when split, none when left out. */
  readonly names: readonly string[];
  /** Why it is named, shortened or split as it is, or why it is left out. */
  readonly notes: readonly string[];
  readonly problem?: PlanProblem;
}

export interface ImportPlan {
  readonly kind: string;
  readonly entries: readonly ImportEntry[];
  readonly items: readonly PlanItem[];
}

export interface PlanOptions {
  /** Split a body over the entry cap into `-2`, `-3` entries instead of leaving it out. */
  readonly split?: boolean;
}

const FALLBACK_SLUG = 'entry';

/**
 * A valid segment (names.ts) from any text: accents dropped, lower case, every run of
 * other characters one `-`, trimmed to 64 characters, alphanumeric at both ends.
 */
export function slugify(raw: string, fallback = FALLBACK_SLUG): string {
  const slug = raw
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 64)
    .replace(/[^a-z0-9]+$/, '');
  return slug || fallback;
}

/** `slug` with `-n` at its end, cut so that the whole stays within 64 characters. */
function suffixed(slug: string, n: number): string {
  const suffix = `-${n}`;
  return `${slug.slice(0, 64 - suffix.length).replace(/[^a-z0-9]+$/, '')}${suffix}`;
}

/** Splits text into pieces of at most `cap` UTF-8 bytes, at line ends where it can. */
export function splitBody(body: string, cap: number): string[] {
  const pieces: string[] = [];
  let current = '';
  const flush = () => {
    if (current) pieces.push(current);
    current = '';
  };
  for (const line of body.split(/(?<=\n)/)) {
    if (utf8Bytes(current) + utf8Bytes(line) <= cap) {
      current += line;
      continue;
    }
    flush();
    if (utf8Bytes(line) <= cap) {
      current = line;
      continue;
    }
    // One line over the cap: cut it between characters.
    for (const char of line) {
      if (utf8Bytes(current) + utf8Bytes(char) > cap) flush();
      current += char;
    }
  }
  flush();
  return pieces;
}

/** A description as stored: one line, within the cap (shortened with … if it is not). */
function fitDescription(raw: string, policy: Policy, notes: string[]): string {
  const folded = foldDescription(raw);
  if (descriptionOverCap(folded, policy) === undefined) return folded;
  notes.push(`description shortened to ${policy.descriptionCap} characters`);
  return `${[...folded].slice(0, policy.descriptionCap - 1).join('')}…`;
}

/**
 * A plan built one draft at a time, as the source hands them over (a file read as it
 * arrives): each draft is placed as it comes, and the first name past the entry cap refuses.
 */
export class PlanBuilder {
  private readonly entries: ImportEntry[] = [];
  private readonly items: PlanItem[] = [];
  /** Every name the plan gives out, with the source that has it and its content. */
  private readonly taken = new Map<string, { source: string; description: string; body: string }>();
  /**
   * For a name asked for again, the suffix below which every one is taken: the next search
   * starts there, so entries that all want one name (nothing caps those of groups the model
   * cannot write) are named in linear time, not quadratic.
   */
  private readonly firstFree = new Map<string, number>();
  private writable = 0;

  constructor(
    private readonly kind: string,
    private readonly policy: Policy,
    private readonly options: PlanOptions = {},
  ) {}

  /** The first name `group/slug`, `-2`, `-3`, … from suffix `from` that the plan has not given out. */
  private freeName(group: string, slug: string, from: number): string {
    const base = `${group}/${slug}`;
    const known = this.firstFree.get(base) ?? 1;
    for (let n = Math.max(from, known); ; n++) {
      const name = `${group}/${n === 1 ? slug : suffixed(slug, n)}`;
      if (this.taken.has(name)) continue;
      // Every suffix from `known` to n was taken (names are never given back): the next search starts at n.
      if (from <= known) this.firstFree.set(base, n);
      return name;
    }
  }

  add(draft: Draft): void {
    const { policy, taken } = this;
    const notes = [...(draft.notes ?? [])];
    const group = slugify(draft.group, 'topics');
    const slug = slugify(draft.slug);
    if (group !== draft.group.trim().toLowerCase()) {
      notes.push(`group ${JSON.stringify(draft.group)} is not a valid group name: made ${group}`);
    }
    if (!isValidSegment(draft.slug.trim().toLowerCase())) {
      notes.push(`${JSON.stringify(draft.slug)} is not a valid slug: made ${slug}`);
    }
    const body = normalizeNewlines(draft.body).replaceAll('\u0000', '');
    // A description that folds to nothing (blank, control characters) would refuse the whole import.
    const description = fitDescription(foldDescription(draft.description) || slug, policy, notes);
    const wanted = `${group}/${slug}`;
    const holder = taken.get(wanted);
    if (holder && holder.body === body && holder.description === description) {
      this.items.push({
        source: draft.source,
        names: [],
        notes: [...notes, `duplicate of ${holder.source}: left out`],
        problem: 'duplicate',
      });
      return;
    }
    const pieces = bodyOverCap(body, policy) === undefined ? [body] : splitBody(body, policy.entryCap);
    if (pieces.length > 1 && !this.options.split) {
      this.items.push({
        source: draft.source,
        names: [wanted],
        notes: [
          ...notes,
          // Each door adds how to split it (--split, ?split=1).
          `${formatBytes(utf8Bytes(body))} is over the entry cap of ${formatBytes(policy.entryCap)}`,
        ],
        problem: 'too-large',
      });
      return;
    }
    const first = this.freeName(group, slug, 1);
    if (holder) notes.push(`${wanted} is taken by ${holder.source}: named ${first}`);
    const names: string[] = [];
    pieces.forEach((piece, index) => {
      const name = index === 0 ? first : this.freeName(group, first.slice(group.length + 1), index + 1);
      const partDescription =
        pieces.length > 1
          ? fitDescription(`${description} (part ${index + 1} of ${pieces.length})`, policy, [])
          : description;
      taken.set(name, { source: draft.source, description: partDescription, body: piece });
      this.entries.push({ name, description: partDescription, body: piece });
      names.push(name);
      // Each name the plan gives out in a writable group is an entry after the import: past the cap, it is refused whatever follows.
      if (isWritableName(name, policy)) checkEntryCount('the import', ++this.writable, policy);
    });
    if (pieces.length > 1)
      notes.push(`over the entry cap of ${formatBytes(policy.entryCap)}: split in ${pieces.length}`);
    this.items.push({ source: draft.source, names, notes });
  }

  plan(): ImportPlan {
    return { kind: this.kind, entries: this.entries, items: this.items };
  }
}

/** Turns the drafts of a source into a plan under the policy's names and caps. */
export function buildPlan(
  kind: string,
  drafts: Iterable<Draft>,
  policy: Policy,
  options: PlanOptions = {},
): ImportPlan {
  const builder = new PlanBuilder(kind, policy, options);
  for (const draft of drafts) builder.add(draft);
  return builder.plan();
}

function formatBytes(bytes: number): string {
  return `${bytes.toLocaleString('en-US')} bytes`;
}

/** The plan's entries as the export document Transfer.import applies. */
export function planDocument(plan: ImportPlan): ExportDocument {
  return { format: EXPORT_FORMAT, version: EXPORT_VERSION, entries: plan.entries.map((entry) => ({ ...entry })) };
}

/** The items of a plan left out because they do not fit (without --split). */
export function tooLarge(plan: ImportPlan): PlanItem[] {
  return plan.items.filter((item) => item.problem === 'too-large');
}

/** The text of a source file, or a refusal saying it is not UTF-8 text. */
export function textOf(file: ImportFile): string {
  let text: string;
  try {
    text = 'text' in file ? file.text : new TextDecoder('utf-8', { fatal: true }).decode(file.bytes);
  } catch {
    throw notText(file);
  }
  if (text.includes('\u0000')) throw notText(file);
  return withoutByteOrderMark(text);
}

/** The refusal of a file that is not UTF-8 text. */
export function notText(file: ImportFile): EngramError {
  return new EngramError('INVALID_ARGUMENT', `${file.path} is not UTF-8 text (a binary file?); nothing was imported.`);
}

/** A refusal of the whole source, saying where it is wrong. */
export function badSource(message: string, detail?: ErrorDetail): EngramError {
  return new EngramError('INVALID_ARGUMENT', `${message}; nothing was imported.`, detail);
}
