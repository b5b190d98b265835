/**
 * A person's edits, as the web UI makes them: an entry's whole body and description saved
 * at once (where the tool appends or replaces a piece), and a new entry created only
 * while its name is free (where the tool would append to an existing one). A save names
 * the revision it was based on: if the entry has moved on since (a model wrote to it),
 * the save is refused with STALE_REVISION and nothing changes, so the person can compare
 * and decide. The same name rules, caps and messages as memory_write: both go through
 * planEdit and checkCaps, in one store transaction.
 */

import type { Memory, WriteOutcome } from './memory.js';
import { assertWritable, type Caller } from './model/caller.js';
import { checkCaps, planEdit, type WriteRequest } from './model/edit.js';
import { EngramError } from './model/errors.js';
import { parseWritableName } from './model/names.js';
import { normalizeNewlines, utf8Bytes } from './model/text.js';
import type { Change, StoredEntry, Usage } from './port.js';

export interface SaveRequest {
  readonly name: string;
  /** The new description; left as it is when omitted. */
  readonly description?: string;
  /** The new body, whole; left as it is when omitted. */
  readonly body?: string;
  /** The revision the person read; omitted, the save goes over whatever is there. */
  readonly expectedRevision?: number;
}

export interface CreateRequest {
  readonly name: string;
  readonly description: string;
  readonly body: string;
}

/** The tool's request that turns `current` into the body and description asked for. */
function wholeEdit(name: string, current: StoredEntry, description?: string, body?: string): WriteRequest {
  if (body === undefined || body === current.body) return { name, description };
  // The whole body occurs in itself exactly once: replacing it is replacing everything.
  if (current.body === '') return { name, description, new: body };
  return { name, description, old: current.body, new: body };
}

/** Runs the tool's edit rules and caps on `request` against `current`: the change a store applies. */
function decideEdit(memory: Memory, current: StoredEntry | undefined, request: WriteRequest, usage: Usage): Change {
  const result = planEdit(current, request, memory.policy);
  if (current && result.body === current.body && result.description === current.description) return { kind: 'none' };
  checkCaps(
    request.name,
    current,
    { description: result.description, size: utf8Bytes(result.body) },
    usage,
    memory.policy,
  );
  return { kind: 'put', ...result };
}

/** Saves a person's edit of an existing entry; STALE_REVISION when it moved past `expectedRevision`. */
export async function saveEntry(memory: Memory, caller: Caller, request: SaveRequest): Promise<WriteOutcome> {
  const name = parseWritableName(request.name, memory.policy);
  assertWritable(caller);
  const body = request.body === undefined ? undefined : normalizeNewlines(request.body);
  const { expectedRevision } = request;
  const { before, after } = await memory.store.mutate(
    caller,
    name,
    (current, usage) => {
      if (!current) {
        throw new EngramError('NOT_FOUND', `${name} not found: it may have been dropped meanwhile; nothing was saved.`);
      }
      if (expectedRevision !== undefined && current.revision !== expectedRevision) {
        throw new EngramError(
          'STALE_REVISION',
          `${name} has changed since you opened it (revision ${expectedRevision}, now ${current.revision}); nothing was saved.`,
          { reason: 'stale-revision', name, expected: expectedRevision, current: current.revision },
        );
      }
      return decideEdit(memory, current, wholeEdit(name, current, request.description, body), usage);
    },
    memory.rules,
  );
  if (!after) throw new Error(`store returned no entry after saving ${name}`);
  return { entry: after, changed: before?.revision !== after.revision };
}

/** Creates a new entry; CONFLICT, changing nothing, when a live entry has the name. */
export async function createEntry(memory: Memory, caller: Caller, request: CreateRequest): Promise<StoredEntry> {
  const name = parseWritableName(request.name, memory.policy);
  assertWritable(caller);
  const edit: WriteRequest = { name, description: request.description, new: normalizeNewlines(request.body) };
  const { after } = await memory.store.mutate(
    caller,
    name,
    (current, usage) => {
      if (current) {
        throw new EngramError('CONFLICT', `${name} already exists: open it to change it, or choose another name.`, {
          reason: 'entry-exists',
          name,
        });
      }
      return decideEdit(memory, undefined, edit, usage);
    },
    memory.rules,
  );
  if (!after) throw new Error(`store returned no entry after creating ${name}`);
  return after;
}
