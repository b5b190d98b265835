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
 * entry cap is refused as soon as it gives out the first name too many; what a plan lists
 * of the items it leaves out is bounded, the rest counted, whatever the source repeats.
 * Each bridge reads in steps (steps.ts), so a server can serve others while it plans.
 */

import { bodyOverCap, descriptionOverCap } from '../../memory/model/caps.js';
import { checkEntryCount } from '../../memory/model/edit.js';
import { EngramError, type ErrorDetail } from '../../memory/model/errors.js';
import { isValidSegment, isWritableName } from '../../memory/model/names.js';
import type { Policy } from '../../memory/model/policy.js';
import {
  charLength,
  foldDescription,
  normalizeNewlines,
  utf8Bytes,
  withoutByteOrderMark,
} from '../../memory/model/text.js';
import { EXPORT_FORMAT, EXPORT_VERSION, type ExportDocument } from '../transfer.js';
import { STEP_LINE_CHARS } from './lines.js';
import { runWhole, STEP_UNITS, type Steps } from './steps.js';

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
  /** Every item that became entries, and the first LISTED_LEFT_OUT items left out for each problem. */
  readonly items: readonly PlanItem[];
  /** How many more items were left out, by problem, not listed one by one (a source that repeats a line a million times). */
  readonly unlisted: Readonly<Record<PlanProblem, number>>;
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

/** UTF-8 bytes of the code point `code`. */
function codePointBytes(code: number): number {
  return code < 0x80 ? 1 : code < 0x800 ? 2 : code < 0x10000 ? 3 : 4;
}

/**
 * Splits text into pieces of at most `cap` UTF-8 bytes, at line ends where it can. One pass
 * over the text, each line and character counted once (a piece's size is kept as it
 * grows, never measured again): linear in the text, yielding between steps.
 */
export function* splitBody(body: string, cap: number): Steps<string[]> {
  const pieces: string[] = [];
  let start = 0;
  let bytes = 0;
  let units = 0;
  const flush = (at: number) => {
    if (at > start) pieces.push(body.slice(start, at));
    start = at;
    bytes = 0;
  };
  for (let at = 0; at < body.length; ) {
    const newline = body.indexOf('\n', at);
    const end = newline === -1 ? body.length : newline + 1;
    const lineBytes = utf8Bytes(body.slice(at, end));
    if (bytes + lineBytes > cap) flush(at);
    if (lineBytes <= cap) bytes += lineBytes;
    else {
      // One line over the cap: cut it between characters.
      for (let char = at; char < end; ) {
        const code = body.codePointAt(char) ?? 0;
        const charBytes = codePointBytes(code);
        if (bytes + charBytes > cap) flush(char);
        bytes += charBytes;
        char += code > 0xffff ? 2 : 1;
        if (++units % STEP_UNITS === 0) yield;
      }
    }
    at = end;
    if (++units % STEP_UNITS === 0) yield;
  }
  flush(body.length);
  return pieces;
}

/** The first `count` characters (code points) of `text`, read no further. */
function firstChars(text: string, count: number): string {
  let end = 0;
  let taken = 0;
  for (const char of text) {
    if (taken++ === count) break;
    end += char.length;
  }
  return text.slice(0, end);
}

/** Characters of a source's own text quoted in a note or a refusal: enough to recognise it. */
const QUOTED_CHARS = 80;

/** `text` for a note, cut to QUOTED_CHARS characters (with …): a report never echoes a whole file. */
export function excerpt(text: string): string {
  return charLength(text) <= QUOTED_CHARS ? text : `${firstChars(text, QUOTED_CHARS)}…`;
}

/** `text` as a JSON string for a note, cut likewise. */
export function quoted(text: string): string {
  return charLength(text) <= QUOTED_CHARS ? JSON.stringify(text) : `${JSON.stringify(firstChars(text, QUOTED_CHARS))}…`;
}

/** A description as stored: one line, within the cap (shortened with … if it is not). */
function fitDescription(raw: string, policy: Policy, notes: string[]): string {
  const folded = foldDescription(raw);
  if (descriptionOverCap(folded, policy) === undefined) return folded;
  notes.push(`description shortened to ${policy.descriptionCap} characters`);
  return `${firstChars(folded, policy.descriptionCap - 1)}…`;
}

/** Items left out listed one by one in a plan, for each problem (duplicate, too large, not an entry); the rest are counted. */
export const LISTED_LEFT_OUT = 100;

/**
 * A plan built one draft at a time, as the source hands them over (a file read as it
 * arrives): each draft is placed as it comes, and the first name past the entry cap
 * refuses. What it holds is bounded whatever the source repeats: names are capped (those
 * of groups the model writes, and apart those of other groups, by the entry cap), the
 * bytes of those the model writes by the user cap, and the
 * items left out are listed up to LISTED_LEFT_OUT for each problem, the others only counted.
 */
export class PlanBuilder {
  private readonly entries: ImportEntry[] = [];
  private readonly items: PlanItem[] = [];
  private readonly listed: Record<PlanProblem, number> = { duplicate: 0, 'too-large': 0, 'not-an-entry': 0 };
  private readonly unlisted: Record<PlanProblem, number> = { duplicate: 0, 'too-large': 0, 'not-an-entry': 0 };
  /** Every name the plan gives out, with the source that has it and its content. */
  private readonly taken = new Map<string, { source: string; description: string; body: string }>();
  /**
   * For a name asked for again, the suffix below which every one is taken: the next search
   * starts there, so entries that all want one name are named in linear time, not quadratic.
   */
  private readonly firstFree = new Map<string, number>();
  private writable = 0;
  private writableBytes = 0;
  private otherGroups = 0;

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

  /** An item of the source left out of the plan: listed while few of its problem are, else counted. */
  leaveOut(item: PlanItem & { readonly problem: PlanProblem }): void {
    if (this.listed[item.problem] < LISTED_LEFT_OUT) {
      this.listed[item.problem]++;
      this.items.push(item);
    } else this.unlisted[item.problem]++;
  }

  /** Places a draft: named, its description fitted, its body split when asked (a step at a time). */
  *add(draft: Draft): Steps<void> {
    const { policy, taken } = this;
    const notes = [...(draft.notes ?? [])];
    const group = slugify(draft.group, 'topics');
    const slug = slugify(draft.slug);
    if (group !== draft.group.trim().toLowerCase()) {
      notes.push(`group ${quoted(draft.group)} is not a valid group name: made ${group}`);
    }
    if (!isValidSegment(draft.slug.trim().toLowerCase())) {
      notes.push(`${quoted(draft.slug)} is not a valid slug: made ${slug}`);
    }
    const body = normalizeNewlines(draft.body).replaceAll('\u0000', '');
    // A description that folds to nothing (blank, control characters) would refuse the whole import.
    const description = fitDescription(foldDescription(draft.description) || slug, policy, notes);
    const wanted = `${group}/${slug}`;
    const holder = taken.get(wanted);
    if (holder && holder.body === body && holder.description === description) {
      this.leaveOut({
        source: draft.source,
        names: [],
        notes: [...notes, `duplicate of ${holder.source}: left out`],
        problem: 'duplicate',
      });
      return;
    }
    const over = bodyOverCap(body, policy);
    if (over && !this.options.split) {
      this.leaveOut({
        source: draft.source,
        names: [wanted],
        notes: [
          ...notes,
          // Each door adds how to split it (--split, ?split=1).
          `${formatBytes(over.size)} is over the entry cap of ${formatBytes(over.cap)}`,
        ],
        problem: 'too-large',
      });
      return;
    }
    const pieces = over ? yield* splitBody(body, policy.entryCap) : [body];
    const first = this.freeName(group, slug, 1);
    if (holder) notes.push(`${wanted} is taken by ${holder.source}: named ${first}`);
    const names: string[] = [];
    // A step every few thousand pieces, or pieces of STEP_LINE_CHARS characters: each is measured.
    let chars = 0;
    for (const [index, piece] of pieces.entries()) {
      const name = index === 0 ? first : this.freeName(group, first.slice(group.length + 1), index + 1);
      const partDescription =
        pieces.length > 1
          ? fitDescription(`${description} (part ${index + 1} of ${pieces.length})`, policy, [])
          : description;
      taken.set(name, { source: draft.source, description: partDescription, body: piece });
      this.entries.push({ name, description: partDescription, body: piece });
      names.push(name);
      // Each name the plan gives out is an entry after the import (one of another group, with allGroups):
      // past the cap, it is refused whatever follows.
      if (isWritableName(name, policy)) {
        checkEntryCount('the import', ++this.writable, policy);
        // Its bytes are the user's after the import: past the user cap, it is refused as soon as that is known.
        this.writableBytes += utf8Bytes(name) + utf8Bytes(partDescription) + utf8Bytes(piece);
        if (this.writableBytes > policy.userCap) throw overUserCap(policy);
      } else checkEntryCount('the import', ++this.otherGroups, policy);
      chars += piece.length;
      if (index % STEP_UNITS === STEP_UNITS - 1 || chars >= STEP_LINE_CHARS) {
        chars = 0;
        yield;
      }
    }
    if (pieces.length > 1)
      notes.push(`over the entry cap of ${formatBytes(policy.entryCap)}: split in ${pieces.length}`);
    this.items.push({ source: draft.source, names, notes });
  }

  plan(): ImportPlan {
    return { kind: this.kind, entries: this.entries, items: this.items, unlisted: { ...this.unlisted } };
  }
}

/** Turns the drafts of a source into a plan under the policy's names and caps, a step at a time. */
export function* planSteps(
  kind: string,
  drafts: Iterable<Draft>,
  policy: Policy,
  options: PlanOptions = {},
): Steps<ImportPlan> {
  const builder = new PlanBuilder(kind, policy, options);
  for (const draft of drafts) {
    yield* builder.add(draft);
    yield;
  }
  return builder.plan();
}

/** The same, in one stretch (tests, and what a door runs whole). */
export function buildPlan(
  kind: string,
  drafts: Iterable<Draft>,
  policy: Policy,
  options: PlanOptions = {},
): ImportPlan {
  return runWhole(planSteps(kind, drafts, policy, options));
}

function formatBytes(bytes: number): string {
  return `${bytes.toLocaleString('en-US')} bytes`;
}

/** The plan's entries as the export document Transfer.import applies. */
export function planDocument(plan: ImportPlan): ExportDocument {
  return { format: EXPORT_FORMAT, version: EXPORT_VERSION, entries: plan.entries.map((entry) => ({ ...entry })) };
}

/** The items of a plan left out because they do not fit (without --split): those listed, and how many in all. */
export function tooLarge(plan: ImportPlan): { readonly listed: PlanItem[]; readonly count: number } {
  const listed = plan.items.filter((item) => item.problem === 'too-large');
  return { listed, count: listed.length + plan.unlisted['too-large'] };
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

/**
 * The refusal of a source whose own entries pass the user cap: no import of it could
 * succeed, whatever the memory holds, so it is refused as soon as that is known.
 */
export function overUserCap(policy: Policy): EngramError {
  return new EngramError(
    'TOO_LARGE',
    `the entries of this source come to more than ${formatBytes(policy.userCap)}, all one memory may hold ` +
      '(its user cap, names, descriptions and bodies); nothing was imported. Import a part of it at a time, ' +
      'or raise userCap in the configuration.',
  );
}

/** A refusal of the whole source, saying where it is wrong. */
export function badSource(message: string, detail?: ErrorDetail): EngramError {
  return new EngramError('INVALID_ARGUMENT', `${message}; nothing was imported.`, detail);
}
