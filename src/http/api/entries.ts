/**
 * `/api/entries`: the index (with each entry's last change and the caps), one entry with
 * its body, a person's create, save and drop, its history, and restoring one of its
 * revisions — what the web UI shows and how a person fixes or undoes a model's change.
 * A save may name the revision it is based on (`If-Match: "N"`, the entry's ETag): when a
 * model has written since, it is refused with 412 and the entry as it is now, so nothing
 * the person typed or the model wrote is lost.
 */

import { createEntry, saveEntry } from '../../memory/editor.js';
import type { Caller, Memory } from '../../memory/memory.js';
import { EngramError, isEngramError } from '../../memory/model/errors.js';
import { formatMissing } from '../../memory/model/format.js';
import { jsonBody } from './request.js';
import type { Route } from './route.js';
import { entryJson, type OverviewJson, overviewRowJson, revisionJson } from './shapes.js';
import { apiMessage } from './wording.js';

const RESTORE_EXAMPLE = '{"revision": N}, N a revision number from GET /api/entries/{group}/{slug}/history';

function revisionOf(body: unknown): number {
  const revision = (body as { revision?: unknown } | null)?.revision;
  const keys = typeof body === 'object' && body !== null && !Array.isArray(body) ? Object.keys(body) : [];
  if (keys.length !== 1 || typeof revision !== 'number' || !Number.isInteger(revision) || revision < 1) {
    throw new EngramError('INVALID_ARGUMENT', `the request body must be ${RESTORE_EXAMPLE}; nothing was restored.`);
  }
  return revision;
}

const SAVE_EXAMPLE = '{"description": "…", "body": "…"} (either or both)';
const CREATE_EXAMPLE = '{"name": "group/slug", "description": "…", "body": "…"}';

/** An object of strings with only `allowed` keys and all of `required`; INVALID_ARGUMENT otherwise. */
function stringsOf(
  body: unknown,
  allowed: readonly string[],
  required: readonly string[],
  example: string,
): Record<string, string> {
  const refuse = (what: string) =>
    new EngramError('INVALID_ARGUMENT', `${what}: send ${example}; nothing was changed.`);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw refuse('the request body is not an object');
  for (const [key, value] of Object.entries(body)) {
    if (!allowed.includes(key)) throw refuse(`"${key}" is not a field of this request`);
    if (typeof value !== 'string') throw refuse(`"${key}" must be a string`);
  }
  const missing = required.find((key) => !(key in body));
  if (missing !== undefined) throw refuse(`"${missing}" is missing`);
  return body as Record<string, string>;
}

/** The revision an `If-Match: "N"` header names; undefined without the header. */
function revisionMatched(ifMatch: string | undefined): number | undefined {
  if (ifMatch === undefined) return undefined;
  const revision = /^"([1-9][0-9]{0,14})"$/.exec(ifMatch.trim())?.[1];
  if (revision === undefined) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `If-Match: ${ifMatch} is not understood: send the entry's ETag, "N" with N its revision, or leave it out; nothing was changed.`,
    );
  }
  return Number(revision);
}

/**
 * The live entry `name`; NOT_FOUND when there is none: where it is in the trash, saying so
 * and how to bring it back, else with suggestions.
 */
async function openOne(memory: Memory, caller: Caller, name: string) {
  // A person's read (the web UI, a script): a model's opening is what `opened` records.
  const { found, missing } = await memory.open(caller, [name]);
  const entry = found[0];
  if (!entry) {
    const [absent] = missing;
    const asked = absent?.name ?? name;
    const dropped = await lastDrop(memory, caller, asked);
    if (dropped) {
      throw new EngramError(
        'NOT_FOUND',
        `${asked} is in the trash, dropped ${new Date(dropped.at).toISOString()} by ${dropped.actor}: ` +
          `POST /api/trash/${asked}/undrop brings it back. GET /api/trash lists the trash.`,
        { reason: 'open-in-trash', name: asked, droppedAt: dropped.at, droppedBy: dropped.actor },
      );
    }
    throw new EngramError(
      'NOT_FOUND',
      `${absent ? formatMissing(absent) : `${name} not found.`} GET /api/entries lists every entry.`,
    );
  }
  return entry;
}

/** The drop that put `name` in the trash, when its latest copy is there; undefined when there is none. */
async function lastDrop(memory: Memory, caller: Caller, name: string) {
  try {
    const latest = (await memory.recovery.history(caller, name)).at(-1);
    return latest?.operation === 'drop' ? latest : undefined;
  } catch (error) {
    if (isEngramError(error) && error.code === 'NOT_FOUND') return undefined;
    throw error;
  }
}

/** What an entry's answer says of it, and its revision as the ETag a save sends back in If-Match. */
function entryAnswer(entry: Parameters<typeof entryJson>[0], status = 200) {
  return { status, body: { entry: entryJson(entry) }, headers: { ETag: `"${entry.revision}"` } };
}

export function entryRoutes(memory: Memory): Route[] {
  const { policy } = memory;
  return [
    {
      method: 'GET',
      template: '/api/entries',
      handle: async ({ caller }) => {
        const [{ entries, openedSince }, usage] = await Promise.all([memory.overview(caller), memory.usage(caller)]);
        const overview: OverviewJson = {
          entries: entries.map(overviewRowJson),
          openedSince: new Date(openedSince).toISOString(),
          usage: { bytes: usage.totalBytes, entries: usage.entries },
          limits: {
            entryCap: policy.entryCap,
            userCap: policy.userCap,
            maxEntries: policy.maxEntries,
            descriptionCap: policy.descriptionCap,
            groups: Object.keys(policy.groups),
          },
        };
        return { body: overview };
      },
    },
    {
      method: 'POST',
      template: '/api/entries',
      body: 'json',
      handle: async ({ caller, body }) => {
        const fields = stringsOf(
          jsonBody(body, CREATE_EXAMPLE),
          ['name', 'description', 'body'],
          ['name', 'description', 'body'],
          CREATE_EXAMPLE,
        );
        const entry = await createEntry(memory, caller, {
          name: fields.name ?? '',
          description: fields.description ?? '',
          body: fields.body ?? '',
        });
        return entryAnswer(entry, 201);
      },
    },
    {
      method: 'GET',
      template: '/api/entries/{group}/{slug}',
      handle: async ({ caller, name }) => entryAnswer(await openOne(memory, caller, name)),
    },
    {
      method: 'PUT',
      template: '/api/entries/{group}/{slug}',
      body: 'json',
      handle: async ({ caller, name, body, ifMatch }) => {
        const fields = stringsOf(jsonBody(body, SAVE_EXAMPLE), ['description', 'body'], [], SAVE_EXAMPLE);
        const expectedRevision = revisionMatched(ifMatch);
        try {
          const { entry } = await saveEntry(memory, caller, {
            name,
            ...fields,
            ...(expectedRevision === undefined ? {} : { expectedRevision }),
          });
          return entryAnswer(entry);
        } catch (error) {
          if (!isEngramError(error) || error.code !== 'STALE_REVISION') throw error;
          // The entry as it is now goes with the refusal: what changed, to compare with what was typed.
          const current = await openOne(memory, caller, name);
          return {
            status: 412,
            body: { error: { code: error.code, message: apiMessage(error), current: entryJson(current) } },
            headers: { ETag: `"${current.revision}"` },
          };
        }
      },
    },
    {
      method: 'DELETE',
      template: '/api/entries/{group}/{slug}',
      handle: async ({ caller, name }) => {
        const { entry } = await memory.drop(caller, name);
        return { body: { dropped: entry.name } };
      },
    },
    {
      method: 'GET',
      template: '/api/entries/{group}/{slug}/history',
      handle: async ({ caller, name }) => ({
        body: { revisions: (await memory.recovery.history(caller, name)).map(revisionJson) },
      }),
    },
    {
      method: 'POST',
      template: '/api/entries/{group}/{slug}/restore',
      body: 'json',
      handle: async ({ caller, name, body }) => {
        const revision = revisionOf(jsonBody(body, RESTORE_EXAMPLE));
        return { body: { entry: entryJson(await memory.recovery.restore(caller, name, revision)) } };
      },
    },
  ];
}
