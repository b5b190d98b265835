/**
 * The user's data in their own hands: export to one versioned JSON document, import it
 * back (merge or replace, in one transaction, with a dry run), and wipe. The format is
 * documented in docs/export-format.md; a malformed or oversized document changes
 * nothing and the error says where it is wrong.
 *
 * An export is read a few entries at a time and can be written out as it is read
 * (exportText), so what a server holds for it stays bounded whatever the memory's size.
 * An import follows the same rules as the model's writes: names, caps, and the groups
 * that can be written (unless the owner asks for every group). A server reads a document
 * as it arrives and hands each entry to a DocumentCheck, which refuses it at the first
 * wrong entry or as soon as a cap is passed, so no document is ever held whole.
 */

import { createRequire } from 'node:module';
import type { z } from 'zod';
import type { Memory } from '../memory/memory.js';
import { assertWritable, type Caller } from '../memory/model/caller.js';
import {
  appendText,
  assertNoNul,
  checkEntryCap,
  checkEntryCount,
  checkUserCap,
  cleanDescription,
} from '../memory/model/edit.js';
import { EngramError } from '../memory/model/errors.js';
import { isValidName, isWritableName, normalizeName } from '../memory/model/names.js';
import type { Policy } from '../memory/model/policy.js';
import { formatCount, normalizeNewlines, utf8Bytes, withoutByteOrderMark } from '../memory/model/text.js';
import { entryBytes } from '../memory/model/usage.js';
import type { DecideAll, NamedChange, RevisionRecord, Store, StoredEntry, WriteRules } from '../memory/port.js';

export const EXPORT_FORMAT = 'engram-export';
export const EXPORT_VERSION = 1;
/** Largest export document import accepts, in bytes. */
const MAX_IMPORT_BYTES = 256 * 1024 * 1024;

/**
 * The export document's schema. zod is loaded the first time a document is parsed, not
 * with the core: it costs more start-up time than the rest of the CLI, and only import
 * needs it. (require, not import(): parse stays synchronous.)
 */
function buildDocumentSchema(z: typeof import('zod').z) {
  const isoTime = z.iso.datetime({ offset: true });

  const RevisionSchema = z
    .object({
      revision: z.number().int().positive(),
      operation: z.string(),
      actor: z.string(),
      at: isoTime,
      description: z.string(),
      body: z.string(),
      note: z.string().optional(),
    })
    .strict();

  const EntrySchema = z
    .object({
      name: z.string(),
      description: z.string(),
      body: z.string(),
      created: isoTime.optional(),
      updated: isoTime.optional(),
      revisions: z.array(RevisionSchema).optional(),
    })
    .strict();

  const TrashSchema = EntrySchema.extend({ droppedAt: isoTime, droppedBy: z.string() }).strict();

  return z
    .object({
      format: z.literal(EXPORT_FORMAT),
      version: z.literal(EXPORT_VERSION),
      exportedAt: isoTime.optional(),
      entries: z.array(EntrySchema),
      trash: z.array(TrashSchema).optional(),
    })
    .strict();
}

let documentSchema: ReturnType<typeof buildDocumentSchema> | undefined;

export type ExportDocument = z.infer<ReturnType<typeof buildDocumentSchema>>;

export type ImportMode = 'merge' | 'replace';

export interface ImportOptions {
  readonly mode: ImportMode;
  /** Import entries of every group, not only of those the model can write. */
  readonly allGroups?: boolean;
  /** In merge mode, overwrite entries whose content differs instead of reporting them. */
  readonly overwrite?: boolean;
  /** Report what would happen, change nothing. */
  readonly dryRun?: boolean;
  /**
   * In merge mode, append the imported body to an entry whose content differs (keeping its
   * description), unless its body holds that text already: how a bridge from another memory
   * system adds to what exists (transfer/bridges).
   */
  readonly append?: boolean;
}

export interface ImportReport {
  readonly created: string[];
  readonly updated: string[];
  readonly unchanged: string[];
  /** Same name, different content, left as it was (merge without overwrite). */
  readonly conflicts: string[];
  /** Entries not in the document, dropped to the trash (replace). */
  readonly dropped: string[];
  /** Entries of groups the model cannot write, left out (import them with allGroups). */
  readonly skipped: string[];
  /** Entries the import appended to (only with the append option). */
  readonly appended?: string[];
  readonly dryRun: boolean;
}

export interface ExportOptions {
  /** Include every revision and the trash. */
  readonly withHistory?: boolean;
}

/** Entries read from the store at a time while exporting. */
const EXPORT_BATCH = 50;

type ExportedEntry = ExportDocument['entries'][number];
type ExportedTrash = NonNullable<ExportDocument['trash']>[number];

/** `"key": [items]` inside the document, as JSON.stringify(document, null, 2) writes it, an item at a time. */
async function* jsonArray(key: string, items: AsyncIterable<unknown>): AsyncGenerator<string> {
  yield `,\n  "${key}": [`;
  let count = 0;
  for await (const item of items) {
    yield `${count++ === 0 ? '' : ','}\n    ${JSON.stringify(item, null, 2).replaceAll('\n', '\n    ')}`;
  }
  yield count === 0 ? ']' : '\n  ]';
}

const iso = (ms: number) => new Date(ms).toISOString();

/** An entry as the export document holds it, before its revisions or its drop. */
function exportEntry(entry: StoredEntry) {
  return {
    name: entry.name,
    description: entry.description,
    body: entry.body,
    created: iso(entry.created),
    updated: iso(entry.updated),
  };
}

function exportRevision(revision: RevisionRecord) {
  return { ...revision, at: iso(revision.at) };
}

/** Where a zod issue points, as `entries[3].name`. */
function issuePath(path: readonly PropertyKey[]): string {
  return path.reduce<string>(
    (text, key) => (typeof key === 'number' ? `${text}[${key}]` : `${text}${text ? '.' : ''}${String(key)}`),
    '',
  );
}

/** An existing entry with an imported body appended, unless it holds that text already; its description kept. */
function appendedEntry(found: StoredEntry, entry: ImportedEntry, policy: Policy): ImportedEntry {
  const kept = { name: found.name, description: found.description };
  if (entry.body === '' || found.body.includes(entry.body)) return { ...kept, body: found.body };
  const body = appendText(found.body, entry.body);
  checkEntryCap(entry.name, body, policy);
  return { ...kept, body };
}

type ImportedEntry = { name: string; description: string; body: string };

/** The refusal of a document that is not JSON, `reason` saying how (as JSON.parse does). */
export function notJson(reason: string): EngramError {
  return new EngramError('INVALID_ARGUMENT', `the import file is not valid JSON (${reason}); nothing was imported.`);
}

/** The schema of the whole document, built the first time one is checked. */
function schema() {
  documentSchema ??= buildDocumentSchema((createRequire(import.meta.url)('zod') as typeof import('zod')).z);
  return documentSchema;
}

/** `value` as `type` reads it, or a refusal saying where it is wrong (`where`: the path to `value` in the document). */
function checked<T>(type: z.ZodType<T>, value: unknown, where: readonly PropertyKey[] = []): T {
  const parsed = type.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const path = issuePath([...where, ...(issue?.path ?? [])]) || 'the document';
  throw new EngramError(
    'INVALID_ARGUMENT',
    `the import file is not an Engram export: at ${path}: ${issue?.message ?? 'invalid'}; nothing was imported.`,
  );
}

/**
 * The entries of a document, checked one at a time against the names and caps: normalised
 * and kept, or left out because their group cannot be written (unless allGroups).
 */
class EntryChecks {
  readonly entries: ImportedEntry[] = [];
  readonly skipped: string[] = [];
  private readonly seen = new Set<string>();
  private total = 0;

  constructor(
    private readonly policy: Policy,
    private readonly options: ImportOptions,
  ) {}

  add(entry: ExportedEntry, index: number): void {
    const where = `entries[${index}]`;
    const name = normalizeName(entry.name);
    const refuse = (message: string) =>
      new EngramError('INVALID_ARGUMENT', `${where}: ${message}; nothing was imported.`);
    if (!isValidName(name)) throw refuse(`${JSON.stringify(entry.name)} is not a valid name (<group>/<slug>)`);
    if (this.seen.has(name)) throw refuse(`${name} appears twice`);
    this.seen.add(name);
    if (!this.options.allGroups && !isWritableName(name, this.policy)) {
      this.skipped.push(name);
      return;
    }
    const body = normalizeNewlines(entry.body);
    let description: string;
    try {
      assertNoNul({ description: entry.description, body });
      description = cleanDescription(name, entry.description, this.policy);
      checkEntryCap(name, body, this.policy);
    } catch (error) {
      if (error instanceof EngramError) throw refuse(error.message.replace(/\.$/, ''));
      throw error;
    }
    if (!description) throw refuse('the description is empty');
    this.total += entryBytes(name, description, utf8Bytes(body));
    this.entries.push({ name, description, body });
  }

  /** Refuses entries over the user's byte cap or entry cap: both only grow as entries are added. */
  checkCaps(): void {
    checkUserCap('the import', this.total, this.policy);
    checkEntryCount('the import', this.entries.length, this.policy);
  }
}

/**
 * An export document checked as a reader produces it (the REST import streams it): each
 * element of `entries` and `trash` as it is read, refused at the first wrong one or as soon
 * as the caps are passed, then the rest of the document (its other keys, with the arrays
 * already read given as empty). Only the entries to import are kept; `Transfer.import` takes it.
 */
export class DocumentCheck {
  private readonly checks: EntryChecks;
  private entryCount = 0;
  private trashCount = 0;
  private done = false;

  constructor(policy: Policy, options: ImportOptions) {
    this.checks = new EntryChecks(policy, options);
  }

  entry(value: unknown): void {
    const index = this.entryCount++;
    this.checks.add(checked(schema().shape.entries.element, value, ['entries', index]), index);
    this.checks.checkCaps();
  }

  /**
   * One revision of the entry (of `entries` or `trash`) being read, before the entry itself:
   * checked and let go, so an entry of any history is never held whole (the entry then comes
   * with its revisions as []). Imports keep no revisions.
   */
  revision(list: 'entries' | 'trash', value: unknown, index: number): void {
    const entry = list === 'entries' ? this.entryCount : this.trashCount;
    checked(schema().shape.entries.element.shape.revisions.unwrap().element, value, [list, entry, 'revisions', index]);
  }

  trashEntry(value: unknown): void {
    const index = this.trashCount++;
    checked(schema().shape.trash.unwrap().element, value, ['trash', index]);
  }

  /** The document without the elements already read: its `entries` (and `trash`) as []. */
  finish(rest: unknown): void {
    checked(schema(), rest);
    this.done = true;
  }

  /** What to import, once the whole document was checked. */
  result(): { entries: ImportedEntry[]; skipped: string[] } {
    if (!this.done) throw new Error('DocumentCheck.result() before finish()');
    return { entries: this.checks.entries, skipped: this.checks.skipped };
  }
}

export class Transfer {
  constructor(
    private readonly store: Store,
    /** The memory's policy: its caps and writable groups hold for every import. */
    readonly policy: Policy,
    /** The Memory service's clock and history limits, for the export's time and every change. */
    private readonly rules: WriteRules,
    /** Runs after entries were dropped (wipe, replace): purges them at once with 0 days of retention. */
    private readonly afterDrop: () => Promise<void>,
  ) {}

  /** The whole document at once: for a library caller; a server streams exportText instead. */
  async export(caller: Caller, options: ExportOptions = {}): Promise<ExportDocument> {
    const entries: ExportDocument['entries'] = [];
    for await (const entry of this.exportedEntries(caller, options)) entries.push(entry);
    const document: ExportDocument = { ...this.exportHeader(), entries };
    if (!options.withHistory) return document;
    const trash: NonNullable<ExportDocument['trash']> = [];
    for await (const entry of this.exportedTrash(caller)) trash.push(entry);
    return { ...document, trash };
  }

  /**
   * The document as JSON text, in pieces, read from the store a few entries at a time:
   * once joined, exactly `JSON.stringify(document, null, 2)` and a final newline.
   */
  async *exportText(caller: Caller, options: ExportOptions = {}): AsyncGenerator<string> {
    const header = JSON.stringify(this.exportHeader(), null, 2);
    yield header.slice(0, header.lastIndexOf('\n'));
    yield* jsonArray('entries', this.exportedEntries(caller, options));
    if (options.withHistory) yield* jsonArray('trash', this.exportedTrash(caller));
    yield '\n}\n';
  }

  private exportHeader() {
    return { format: EXPORT_FORMAT, version: EXPORT_VERSION, exportedAt: iso(this.rules.now()) } as const;
  }

  /** The user's live entries by name, with their revisions when asked for. */
  private async *exportedEntries(caller: Caller, options: ExportOptions): AsyncGenerator<ExportedEntry> {
    const names = (await this.store.index(caller.user)).map((row) => row.name);
    for (let start = 0; start < names.length; start += EXPORT_BATCH) {
      const entries = await this.store.get(caller.user, names.slice(start, start + EXPORT_BATCH));
      entries.sort((a, b) => (a.name < b.name ? -1 : 1));
      for (const entry of entries) {
        if (!options.withHistory) {
          yield exportEntry(entry);
          continue;
        }
        const revisions = await this.store.history(caller.user, entry.name);
        yield { ...exportEntry(entry), revisions: revisions.map(exportRevision) };
      }
    }
  }

  /** The user's trash, most recently dropped first. */
  private async *exportedTrash(caller: Caller): AsyncGenerator<ExportedTrash> {
    for (const entry of await this.store.trash(caller.user)) {
      yield { ...exportEntry(entry), droppedAt: iso(entry.droppedAt), droppedBy: entry.droppedBy };
    }
  }

  /** Parses and checks an export document; throws INVALID_ARGUMENT saying where it is wrong. */
  parse(text: string): ExportDocument {
    if (utf8Bytes(text) > MAX_IMPORT_BYTES) {
      throw new EngramError(
        'TOO_LARGE',
        `the import file is over ${formatCount(MAX_IMPORT_BYTES)} bytes; nothing was imported.`,
      );
    }
    let json: unknown;
    try {
      json = JSON.parse(withoutByteOrderMark(text));
    } catch (error) {
      throw notJson((error as Error).message);
    }
    return checked(schema(), json);
  }

  /** Checks every entry against the names and caps, then the caps on them all. */
  private checkEntries(
    document: ExportDocument,
    options: ImportOptions,
  ): { entries: ImportedEntry[]; skipped: string[] } {
    const checks = new EntryChecks(this.policy, options);
    for (const [index, entry] of document.entries.entries()) checks.add(entry, index);
    checks.checkCaps();
    return { entries: checks.entries, skipped: checks.skipped };
  }

  /** A check for a document read as it arrives, with the options the import will be given. */
  check(options: ImportOptions): DocumentCheck {
    return new DocumentCheck(this.policy, options);
  }

  /** Imports a parsed document, or one a DocumentCheck has read (made with the same options). */
  async import(
    caller: Caller,
    document: ExportDocument | DocumentCheck,
    options: ImportOptions,
  ): Promise<ImportReport> {
    assertWritable(caller);
    const { entries: incoming, skipped } =
      document instanceof DocumentCheck ? document.result() : this.checkEntries(document, options);
    const report: ImportReport = {
      created: [],
      updated: [],
      unchanged: [],
      conflicts: [],
      dropped: [],
      skipped,
      ...(options.append ? { appended: [] } : {}),
      dryRun: options.dryRun === true,
    };
    const append = options.append === true && options.mode === 'merge' && options.overwrite !== true;
    const overwrite = options.mode === 'replace' || options.overwrite === true;
    const decide: DecideAll = (existing, usage) => {
      // A store may run decide again when it retries the transaction: report that run alone.
      for (const names of [
        report.created,
        report.updated,
        report.unchanged,
        report.conflicts,
        report.dropped,
        report.appended ?? [],
      ]) {
        names.length = 0;
      }
      const current = new Map(existing.map((entry) => [entry.name, entry]));
      const changes: NamedChange[] = [];
      let total = usage.totalBytes;
      for (const incomingEntry of incoming) {
        const found = current.get(incomingEntry.name);
        const entry = found && append ? appendedEntry(found, incomingEntry, this.policy) : incomingEntry;
        if (found && found.body === entry.body && found.description === entry.description) {
          report.unchanged.push(entry.name);
          continue;
        }
        if (found && append) report.appended?.push(entry.name);
        if (found && !overwrite && !append) {
          report.conflicts.push(entry.name);
          continue;
        }
        if (!found || !append) (found ? report.updated : report.created).push(entry.name);
        total += entryBytes(entry.name, entry.description, utf8Bytes(entry.body));
        if (found) total -= entryBytes(found.name, found.description, found.size);
        changes.push({ name: entry.name, change: { kind: 'put', operation: 'import', ...entry } });
      }
      if (options.mode === 'replace') {
        const keep = new Set(incoming.map((entry) => entry.name));
        for (const entry of existing) {
          if (keep.has(entry.name)) continue;
          report.dropped.push(entry.name);
          total -= entryBytes(entry.name, entry.description, entry.size);
          changes.push({ name: entry.name, change: { kind: 'drop' } });
        }
      }
      checkUserCap('the import', total, this.policy);
      checkEntryCount('the import', usage.entries + report.created.length - report.dropped.length, this.policy);
      return options.dryRun ? [] : changes;
    };
    await this.store.mutateAll(caller, decide, this.rules);
    if (report.dropped.length > 0 && !report.dryRun) await this.afterDrop();
    return report;
  }

  /** Drops every live entry to the trash; returns how many. */
  async wipe(caller: Caller): Promise<number> {
    assertWritable(caller);
    let count = 0;
    const dropAll: DecideAll = (existing) => {
      count = existing.length;
      return existing.map((entry) => ({ name: entry.name, change: { kind: 'drop' } as const }));
    };
    await this.store.mutateAll(caller, dropAll, this.rules);
    if (count > 0) await this.afterDrop();
    return count;
  }
}

/** Export, import and wipe over a Memory's store, under its policy, clock and history limits. */
export function createTransfer(memory: Memory): Transfer {
  return new Transfer(memory.store, memory.policy, memory.rules, () => memory.recovery.purgeIfNoRetention());
}
