/**
 * `POST /api/import?from=KIND`: a memory kept by another system (transfer/bridges), sent as the
 * files that hold it, `{"files": [{"path", "text"}], "options": {"map", "name"}}`, brought
 * in by the import `engram import --from KIND` runs (transfer/bridges/run.ts). This file only
 * reads the body into the bridge's files and options, and words the answer and the
 * refusals for a REST client: what each item becomes (items left out past the first ones
 * only counted, in `unlisted`), and how to call again.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Caller } from '../../memory/memory.js';
import { EngramError, isEngramError } from '../../memory/model/errors.js';
import { formatCount } from '../../memory/model/text.js';
import { BRIDGE_KINDS, BRIDGES, type BridgeKind } from '../../transfer/bridges/index.js';
import type { ImportFile } from '../../transfer/bridges/plan.js';
import { type ImportedItem, type ImportFromOptions, importFromSource } from '../../transfer/bridges/run.js';
import type { Transfer } from '../../transfer/transfer.js';
import { STATUS_BY_CODE } from './errors.js';
import { type BodySource, bodyTooLarge, readJsonStream, refusedWhileReading } from './import-stream.js';
import type { ApiResult } from './route.js';
import type { ImportFromJson } from './shapes.js';
import { apiMessage } from './wording.js';

/** Most files one import reads, as `engram import --from` (cli/source-files.ts): far more than any memory holds. */
const MAX_FILES = 20_000;

const EXAMPLE = '{"files": [{"path": "memory.jsonl", "text": "…"}], "options": {}}';

/** The options only some kinds take, and which. */
const OPTION_KINDS: Readonly<Record<'map' | 'name', readonly BridgeKind[]>> = {
  map: ['server-memory'],
  name: ['chatgpt', 'claude-code'],
};

/** `?from=KIND` as a kind, or a refusal naming them all. */
export function bridgeKind(value: string): BridgeKind {
  const kind = BRIDGE_KINDS.find((item) => item === value);
  if (kind === undefined) {
    throw new EngramError(
      'INVALID_ARGUMENT',
      `?from=${value} is not understood: use ${BRIDGE_KINDS.map((item) => `?from=${item}`).join(', ')}, ` +
        'or leave it out to import an Engram export document; nothing was imported.',
    );
  }
  return kind;
}

function refuse(message: string): never {
  throw new EngramError('INVALID_ARGUMENT', `${message}: send ${EXAMPLE}; nothing was imported.`);
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function onlyKeys(value: Record<string, unknown>, keys: readonly string[], where: string): void {
  const other = Object.keys(value).find((key) => !keys.includes(key));
  if (other !== undefined) refuse(`${where} has ${JSON.stringify(other)}, which is not one of ${keys.join(', ')}`);
}

/** Longest path a file may be sent under: PATH_MAX on Linux. A report names files by their paths, so they stay short. */
const MAX_PATH_CHARS = 4096;

/** A path as the bridges read it: relative, `/`-separated, without `.` or `..` parts, of a real file's length. */
function checkPath(path: unknown, index: number): string {
  if (typeof path !== 'string' || path === '') refuse(`files[${index}].path must be a non-empty string`);
  if (path.length > MAX_PATH_CHARS) {
    refuse(`files[${index}].path is longer than ${formatCount(MAX_PATH_CHARS)} characters, which no file path is`);
  }
  const parts = path.split('/');
  if (path.includes('\\') || parts.some((part) => part === '' || part === '.' || part === '..')) {
    refuse(`files[${index}].path ${JSON.stringify(path)} must be relative, its folders separated by "/"`);
  }
  return path;
}

/** One file of the body, checked as it arrives. */
function readFile(file: unknown, index: number, seen: Set<string>): ImportFile {
  if (!isObject(file)) refuse(`files[${index}] must be an object {"path", "text"}`);
  onlyKeys(file, ['path', 'text'], `files[${index}]`);
  const path = checkPath(file.path, index);
  if (seen.has(path)) refuse(`files[${index}].path ${JSON.stringify(path)} is given twice`);
  seen.add(path);
  if (typeof file.text !== 'string') refuse(`files[${index}].text must be the file's text, a string`);
  return { path, text: file.text };
}

/**
 * The body's files and options, read as they arrive: each file checked as it comes, the
 * body never held whole. Files past the most the kind reads are only counted, for the refusal.
 */
async function readBody(
  source: BodySource,
  kind: BridgeKind,
): Promise<ApiResult | { files: ImportFile[]; options: unknown }> {
  const most = BRIDGES[kind].folder ? MAX_FILES : 1;
  const files: ImportFile[] = [];
  const seen = new Set<string>();
  let count = 0;
  const read = await readJsonStream(source, {
    arrays: ['files'],
    whole: ['options'],
    item: (_, value, index) => {
      count++;
      if (index < most) files.push(readFile(value, index, seen));
    },
  });
  if (read.kind === 'too-large') return bodyTooLarge(source.maxBytes);
  if (read.kind === 'invalid')
    throw new EngramError('INVALID_ARGUMENT', `the request body is not valid JSON: send ${EXAMPLE}.`);
  const body = read.top;
  if (!isObject(body)) refuse('the body must be a JSON object');
  onlyKeys(body, ['files', 'options'], 'the body');
  if (!Array.isArray(body.files) || count === 0) refuse('the body needs "files", a list of at least one file');
  if (count > MAX_FILES)
    refuse(`the body has ${formatCount(count)} files, more than the ${formatCount(MAX_FILES)} one import reads`);
  if (count > most) refuse(`?from=${kind} reads one file, and the body has ${count}`);
  return { files, options: body.options };
}

function readOptions(value: unknown, kind: BridgeKind): Pick<ImportFromOptions, 'map' | 'name'> {
  if (value === undefined) return {};
  if (!isObject(value)) refuse('"options" must be an object');
  onlyKeys(value, ['map', 'name'], '"options"');
  for (const key of ['map', 'name'] as const) {
    if (value[key] !== undefined && !OPTION_KINDS[key].includes(kind)) {
      refuse(`options.${key} goes with ${OPTION_KINDS[key].map((item) => `?from=${item}`).join(' or ')}`);
    }
  }
  const { map, name } = value;
  if (map !== undefined && (!isObject(map) || !Object.values(map).every((group) => typeof group === 'string'))) {
    refuse('options.map must map entity types to groups, as {"person": "people"}');
  }
  if (name !== undefined && (typeof name !== 'string' || name.trim() === '')) {
    refuse('options.name must be the entry name, as "topics/chatgpt-memories"');
  }
  return {
    ...(map !== undefined ? { map: map as Record<string, string> } : {}),
    ...(name !== undefined ? { name: name.trim() } : {}),
  };
}

/** How to act on what became of an item, in the API's words (the notes say what the source made it). */
function hintOf(item: ImportedItem): string | undefined {
  if (item.problem === 'too-large') return 'send ?split=1 to split it into -2, -3 entries, or shorten it in the source';
  const actions = new Set(item.names.map(({ action }) => action));
  if (actions.has('conflict')) return 'an entry of this name differs: left as it is (?overwrite=1 replaces it)';
  if (actions.has('skip')) return 'its group is not one the model can write (?allGroups=1 imports it)';
  if (actions.has('unchanged')) return 'memory holds this already';
  return undefined;
}

/** A refusal with its data, for the client to act on (which items are too large, which groups there are). */
function refusal(error: EngramError): ApiResult {
  return {
    status: STATUS_BY_CODE[error.code],
    body: { error: { code: error.code, message: apiMessage(error), detail: error.detail } },
  };
}

export async function importFromRequest(
  transfer: Transfer,
  caller: Caller,
  kind: BridgeKind,
  source: BodySource,
  options: Omit<ImportFromOptions, 'map' | 'name'>,
): Promise<ApiResult> {
  let body: Awaited<ReturnType<typeof readBody>>;
  try {
    body = await readBody(source, kind);
  } catch (error) {
    if (isEngramError(error)) return refusedWhileReading(error, source);
    throw error;
  }
  if (!('files' in body)) return body;
  const { files } = body;
  try {
    const result = await importFromSource(transfer, caller, kind, files, {
      ...options,
      ...readOptions(body.options, kind),
      // A large file is planned a slice at a time, the event loop served between slices.
      pause: async () => {
        await nextTurn();
      },
    });
    const items = result.items.map((item) => {
      const hint = hintOf(item);
      return { ...item, ...(hint === undefined ? {} : { hint }) };
    });
    // Items left out past the first ones listed are only counted (a paste repeating one line a million times).
    const unlisted = Object.values(result.unlisted).some((count) => count > 0) ? { unlisted: result.unlisted } : {};
    const answer: ImportFromJson = {
      kind,
      dryRun: result.report.dryRun,
      items,
      ...unlisted,
      tooLarge: result.tooLarge,
      report: result.report,
    };
    return { body: answer };
  } catch (error) {
    if (isEngramError(error) && error.detail !== undefined) return refusal(error);
    throw error;
  }
}
