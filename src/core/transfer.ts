/**
 * The user's data in their own hands: export to one versioned JSON document, import it
 * back (merge or replace, in one transaction, with a dry run), and wipe. The format is
 * documented in docs/export-format.md; a malformed or oversized document changes
 * nothing and the error says where it is wrong.
 */

import { z } from 'zod';
import { assertWritable, type Caller } from './caller.js';
import { assertNoNul, checkEntryCap, checkUserCap, cleanDescription } from './edit.js';
import { EngramError } from './errors.js';
import { isValidName, normalizeName } from './names.js';
import type { Policy } from './policy.js';
import type { NamedChange, RevisionRecord, Store, StoredEntry } from './store.js';
import { formatCount, normalizeNewlines, utf8Bytes } from './text.js';

export const EXPORT_FORMAT = 'engram-export';
export const EXPORT_VERSION = 1;
/** Largest export document import accepts, in bytes. */
const MAX_IMPORT_BYTES = 256 * 1024 * 1024;

const isoTime = z.iso.datetime({ offset: true });

const RevisionSchema = z
  .object({
    revision: z.number().int().positive(),
    operation: z.string(),
    actor: z.string(),
    at: isoTime,
    description: z.string(),
    body: z.string(),
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

const DocumentSchema = z
  .object({
    format: z.literal(EXPORT_FORMAT),
    version: z.literal(EXPORT_VERSION),
    exportedAt: isoTime.optional(),
    entries: z.array(EntrySchema),
    trash: z.array(TrashSchema).optional(),
  })
  .strict();

export type ExportDocument = z.infer<typeof DocumentSchema>;

export type ImportMode = 'merge' | 'replace';

export interface ImportOptions {
  readonly mode: ImportMode;
  /** In merge mode, overwrite entries whose content differs instead of reporting them. */
  readonly overwrite?: boolean;
  /** Report what would happen, change nothing. */
  readonly dryRun?: boolean;
}

export interface ImportReport {
  readonly created: string[];
  readonly updated: string[];
  readonly unchanged: string[];
  /** Same name, different content, left as it was (merge without overwrite). */
  readonly conflicts: string[];
  /** Entries not in the document, dropped to the trash (replace). */
  readonly dropped: string[];
  readonly dryRun: boolean;
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

export class Transfer {
  constructor(
    private readonly store: Store,
    private readonly policy: Policy,
    private readonly now: () => number,
    /** Runs after entries were dropped (wipe, replace): purges them at once with 0 days of retention. */
    private readonly afterDrop: () => Promise<void>,
  ) {}

  async export(caller: Caller, options: { readonly withHistory?: boolean } = {}): Promise<ExportDocument> {
    const names = (await this.store.index(caller.user)).map((row) => row.name);
    const entries = await this.store.get(caller.user, names);
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    const withRevisions = async (entry: StoredEntry) => ({
      ...exportEntry(entry),
      ...(options.withHistory
        ? { revisions: (await this.store.history(caller.user, entry.name)).map(exportRevision) }
        : {}),
    });
    const document: ExportDocument = {
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
      exportedAt: iso(this.now()),
      entries: await Promise.all(entries.map(withRevisions)),
    };
    if (!options.withHistory) return document;
    const trash = await this.store.trash(caller.user);
    return {
      ...document,
      trash: trash.map((entry) => ({
        ...exportEntry(entry),
        droppedAt: iso(entry.droppedAt),
        droppedBy: entry.droppedBy,
      })),
    };
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
      json = JSON.parse(text);
    } catch (error) {
      throw new EngramError(
        'INVALID_ARGUMENT',
        `the import file is not valid JSON (${(error as Error).message}); nothing was imported.`,
      );
    }
    const parsed = DocumentSchema.safeParse(json);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue ? issuePath(issue.path) || 'the document' : 'the document';
      throw new EngramError(
        'INVALID_ARGUMENT',
        `the import file is not an Engram export: at ${where}: ${issue?.message ?? 'invalid'}; nothing was imported.`,
      );
    }
    return parsed.data;
  }

  /** Checks every entry against the names and caps; returns them normalised. */
  private checkEntries(document: ExportDocument): { name: string; description: string; body: string }[] {
    const seen = new Set<string>();
    let total = 0;
    const entries = document.entries.map((entry, index) => {
      const where = `entries[${index}]`;
      const name = normalizeName(entry.name);
      const refuse = (message: string) =>
        new EngramError('INVALID_ARGUMENT', `${where}: ${message}; nothing was imported.`);
      if (!isValidName(name)) throw refuse(`${JSON.stringify(entry.name)} is not a valid name (<group>/<slug>)`);
      if (seen.has(name)) throw refuse(`${name} appears twice`);
      seen.add(name);
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
      total += utf8Bytes(body);
      return { name, description, body };
    });
    checkUserCap('the import', total, this.policy);
    return entries;
  }

  async import(caller: Caller, document: ExportDocument, options: ImportOptions): Promise<ImportReport> {
    assertWritable(caller);
    const incoming = this.checkEntries(document);
    const report: ImportReport = {
      created: [],
      updated: [],
      unchanged: [],
      conflicts: [],
      dropped: [],
      dryRun: options.dryRun === true,
    };
    const overwrite = options.mode === 'replace' || options.overwrite === true;
    await this.store.mutateAll(caller, (existing, usage) => {
      // A store may run decide again when it retries the transaction: report that run alone.
      for (const names of [report.created, report.updated, report.unchanged, report.conflicts, report.dropped]) {
        names.length = 0;
      }
      const current = new Map(existing.map((entry) => [entry.name, entry]));
      const changes: NamedChange[] = [];
      let total = usage.totalBytes;
      for (const entry of incoming) {
        const found = current.get(entry.name);
        if (found && found.body === entry.body && found.description === entry.description) {
          report.unchanged.push(entry.name);
          continue;
        }
        if (found && !overwrite) {
          report.conflicts.push(entry.name);
          continue;
        }
        (found ? report.updated : report.created).push(entry.name);
        total += utf8Bytes(entry.body) - (found?.size ?? 0);
        changes.push({ name: entry.name, change: { kind: 'put', operation: 'import', ...entry } });
      }
      if (options.mode === 'replace') {
        const keep = new Set(incoming.map((entry) => entry.name));
        for (const entry of existing) {
          if (keep.has(entry.name)) continue;
          report.dropped.push(entry.name);
          total -= entry.size;
          changes.push({ name: entry.name, change: { kind: 'drop' } });
        }
      }
      checkUserCap('the import', total, this.policy);
      return options.dryRun ? [] : changes;
    });
    if (report.dropped.length > 0 && !report.dryRun) await this.afterDrop();
    return report;
  }

  /** Drops every live entry to the trash; returns how many. */
  async wipe(caller: Caller): Promise<number> {
    assertWritable(caller);
    let count = 0;
    await this.store.mutateAll(caller, (existing) => {
      count = existing.length;
      return existing.map((entry) => ({ name: entry.name, change: { kind: 'drop' } as const }));
    });
    if (count > 0) await this.afterDrop();
    return count;
  }
}
