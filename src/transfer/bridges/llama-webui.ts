/**
 * The llama.cpp WebUI's memory export (settings, Memory → Export memory: a file
 * `llama_memory_YYYY-MM-DD.json`). The WebUI keeps its memory in the browser (IndexedDB)
 * behind the same three tools as Engram, and exports it as `{"entries": [...]}`, each entry
 * `{body, description, name, updated}`: name `<group>/<slug>`, description one line, body
 * ending with a line break, updated a time in milliseconds (not kept: Engram's history
 * starts at the import). Format read from ggml-org/llama.cpp tools/ui (memory.service.ts,
 * MemoryService.exportEntries, commit 22249cf997b78f8e30257efe8bd3b367ea3bf69e); it carries
 * no version, so a file that names one, or is not of this shape, is refused whole.
 *
 * Every JSON text is checked for nesting before it is parsed (MAX_JSON_DEPTH). A door that
 * must not hold the event loop (REST) reads the file in slices instead (readLlamaWebui): a
 * streaming parser hands over its entries one at a time, each planned (a step at a time)
 * once its slice is read and let go, with a pause the door gives between slices and steps; what it refuses, and
 * how, is what the whole-file parse refuses (a file wrong in two ways may be refused for
 * the one met first).
 */

import { JSONParser } from '@streamparser/json';
import { nestsDeeperThan } from '../../json/json-nesting.js';
import { isRecord, MAX_JSON_DEPTH, TopLevel } from '../../json/json-top-level.js';
import type { Policy } from '../../memory/model/policy.js';
import { EXPORT_FORMAT } from '../transfer.js';
import {
  badSource,
  type Draft,
  type ImportFile,
  type ImportPlan,
  notText,
  PlanBuilder,
  type PlanOptions,
  planSteps,
  quoted,
  textOf,
} from './plan.js';
import { runWhole, runWithPauses, type Steps } from './steps.js';

interface WebuiEntry {
  readonly name: string;
  readonly description: string;
  readonly body: string;
}

const isString = (value: unknown): value is string => typeof value === 'string';

/** Refuses nesting past the limit every door has, as soon as it is passed (the streaming parser holds a frame per level). */
function tooDeep(file: ImportFile): never {
  throw badSource(
    `${file.path} is JSON nested more than ${MAX_JSON_DEPTH} levels deep, which no llama.cpp WebUI memory export is`,
  );
}

/** The file's JSON, its nesting checked before it is parsed (JSON.parse of a file of `[` takes seconds and gigabytes). */
function parseJson(file: ImportFile, text = textOf(file)): unknown {
  if (nestsDeeperThan(text, MAX_JSON_DEPTH)) tooDeep(file);
  try {
    return JSON.parse(text);
  } catch (error) {
    const message = (error as Error).message;
    // JSON that stops where the text does (a message without a position, or one at its end) was cut short.
    const at = /position (\d+)/.exec(message)?.[1];
    const atEnd = /end of JSON input/i.test(message) || (at !== undefined && Number(at) >= text.trimEnd().length);
    const cut = atEnd ? ': the file may be cut short' : '';
    throw badSource(`${file.path} is not JSON (${message})${cut}`);
  }
}

/** The list of entries of one export file, each checked only when it is planned (entryOf). */
function entriesOf(file: ImportFile): unknown[] {
  const data = parseJson(file);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw badSource(`${file.path} is not a llama.cpp WebUI memory export (a JSON object with "entries")`);
  }
  const record = data as Record<string, unknown>;
  checkMembers(file, record);
  if (!Array.isArray(record.entries)) {
    throw badSource(`${file.path} has no "entries" list: not a llama.cpp WebUI memory export`);
  }
  return record.entries;
}

/** The top-level members that make a file another kind of export (an Engram one, a versioned one). */
function checkMembers(file: ImportFile, record: Record<string, unknown>): void {
  if (record.format === EXPORT_FORMAT) {
    throw badSource(`${file.path} is an Engram export: import it as one, not as another memory system's file`, {
      reason: 'import-engram-export',
      path: file.path,
    });
  }
  if ('version' in record) {
    throw badSource(
      `${file.path} has "version": ${JSON.stringify(record.version)}, which no llama.cpp WebUI memory export ` +
        'known here has (its export carries no version)',
    );
  }
}

/** One entry of an export file, checked as the WebUI's own import checks it. */
function entryOf(file: ImportFile, entry: unknown, index: number): WebuiEntry {
  const where = `${file.path} entry ${index + 1}`;
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) {
    throw badSource(`${where} is not a JSON object`);
  }
  const { name, description, body, updated } = entry as Record<string, unknown>;
  if (
    !isString(name) ||
    !isString(description) ||
    !isString(body) ||
    typeof updated !== 'number' ||
    !Number.isFinite(updated)
  ) {
    throw badSource(
      `${where}: an entry needs a name, a description and a body (strings) and updated (a time in milliseconds)`,
    );
  }
  if (name.trim().split('/').length !== 2) {
    throw badSource(`${where}: the name ${quoted(name)} is not <group>/<slug>`);
  }
  return { name: name.trim(), description, body };
}

/** The draft of a checked entry. */
function draftOf({ name, description, body }: WebuiEntry, index: number): Draft {
  const [group = '', slug = ''] = name.split('/');
  return {
    source: `entry ${index + 1}: ${quoted(name)}`,
    group,
    slug,
    description,
    body,
    notes: description.trim() === '' ? ['no description: described by its name'] : [],
  };
}

const NO_ENTRIES = 'the file holds no entry ("entries" is empty)';

export function llamaWebuiSteps(files: readonly ImportFile[], policy: Policy, options: PlanOptions): Steps<ImportPlan> {
  const lists = files.map((file) => ({ file, entries: entriesOf(file) }));
  if (lists.every(({ entries }) => entries.length === 0)) throw badSource(NO_ENTRIES);
  // Drafted one at a time as the plan takes them: a file of more entries than the cap is refused at the first one over it.
  function* drafts(): Generator<Draft> {
    for (const { file, entries } of lists) {
      for (const [index, entry] of entries.entries()) yield draftOf(entryOf(file, entry, index), index);
    }
  }
  return planSteps('llama-webui', drafts(), policy, options);
}

export function parseLlamaWebui(files: readonly ImportFile[], policy: Policy, options: PlanOptions = {}): ImportPlan {
  return runWhole(llamaWebuiSteps(files, policy, options));
}

/** Characters of the file parsed between two pauses: a millisecond or two of parsing and planning. */
const SLICE_CHARS = 16 * 1024;

/** Past this many characters, a file that is not JSON is not parsed whole again to word why. */
const WHOLE_PARSE_CHARS = 1024 * 1024;

/**
 * Reads one file a slice at a time into the plan, pausing between slices: its entries are
 * planned as the parser hands them over. Returns how many entries it holds.
 */
async function readFileInSlices(file: ImportFile, builder: PlanBuilder, pause: () => Promise<void>): Promise<number> {
  const text = 'text' in file ? file.text : textOf(file);
  const parser = new JSONParser({ paths: ['$.format', '$.version', '$.entries.*'], keepStack: false });
  // Only the kind of "entries" is kept: a file of a million other members holds none of them.
  const top = new TopLevel((key) => key === 'entries');
  const members: Record<string, unknown> = {};
  let count = 0;
  let refusal: unknown;
  parser.onToken = (token) => {
    top.token(token);
    // The parser holds a frame of some 250 bytes per level: a file of `[` would hold 250 times its size.
    if (top.depth > MAX_JSON_DEPTH) {
      try {
        tooDeep(file);
      } catch (error) {
        refusal = error;
        throw error;
      }
    }
    // Parsed whole, the last "entries" would count; read in slices, both would be planned.
    if (top.repeated !== undefined) {
      refusal = badSource(`${file.path} has "entries" twice, which no llama.cpp WebUI memory export has`);
      throw refusal;
    }
  };
  // The entries a slice completes, planned once the parser has handed them over (a step at a time, pausing).
  const drafts: Draft[] = [];
  parser.onValue = ({ value, key, stack }) => {
    if (stack.length === 1 && typeof key === 'string') members[key] = value;
    if (stack.length !== 2 || typeof key !== 'number') return;
    try {
      // Members met before the entries refuse the file first, as they do when it is parsed whole.
      checkMembers(file, members);
      drafts.push(draftOf(entryOf(file, value, key), key));
      count++;
    } catch (error) {
      refusal = error;
      throw error;
    }
  };
  let valid = true;
  let parseError = '';
  const feed = (write: () => void): void => {
    if (!valid) return;
    try {
      write();
    } catch (error) {
      if (refusal !== undefined) throw refusal;
      valid = false;
      parseError = error instanceof Error ? error.message : String(error);
    }
  };
  const start = text.startsWith('\uFEFF') ? 1 : 0;
  for (let at = start; at < text.length; at += SLICE_CHARS) {
    const slice = text.slice(at, at + SLICE_CHARS);
    // Checked as it comes, and to the end even once the JSON is wrong: a binary file is refused as one.
    if (slice.includes('\u0000')) throw notText(file);
    feed(() => parser.write(slice));
    for (const draft of drafts.splice(0)) await runWithPauses(builder.add(draft), pause);
    await pause();
  }
  let cutShort = false;
  feed(() => {
    cutShort = true; // a refusal here means the text ended before the JSON did
    if (!parser.isEnded) parser.end();
    cutShort = false;
  });
  for (const draft of drafts.splice(0)) await runWithPauses(builder.add(draft), pause);
  if (!valid) {
    // Not JSON: a file of a few slices is parsed whole once more, for the same words as
    // JSON.parse gives (it refuses all the streaming parser refuses; should it ever take such
    // a file, the file is still refused). A larger one is not: that parse would hold the
    // event loop as long as the slices were meant to avoid, so the streaming parser says why.
    if (text.length - start <= WHOLE_PARSE_CHARS) parseJson(file, text.slice(start));
    throw badSource(`${file.path} is not JSON (${parseError})${cutShort ? ': the file may be cut short' : ''}`);
  }
  if (!isRecord(top.root)) {
    throw badSource(`${file.path} is not a llama.cpp WebUI memory export (a JSON object with "entries")`);
  }
  checkMembers(file, members);
  if (!Array.isArray(top.root.entries)) {
    throw badSource(`${file.path} has no "entries" list: not a llama.cpp WebUI memory export`);
  }
  return count;
}

/**
 * The plan of an export read a slice at a time, `pause` awaited between slices (a door
 * gives the event loop a turn there): the same plan, and the same refusals, as parseLlamaWebui.
 */
export async function readLlamaWebui(
  files: readonly ImportFile[],
  policy: Policy,
  options: PlanOptions,
  pause: () => Promise<void>,
): Promise<ImportPlan> {
  const builder = new PlanBuilder('llama-webui', policy, options);
  let count = 0;
  for (const file of files) count += await readFileInSlices(file, builder, pause);
  if (count === 0) throw badSource(NO_ENTRIES);
  return builder.plan();
}
