/**
 * The llama.cpp WebUI's memory export (settings, Memory → Export memory: a file
 * `llama_memory_YYYY-MM-DD.json`). The WebUI keeps its memory in the browser (IndexedDB)
 * behind the same three tools as Engram, and exports it as `{"entries": [...]}`, each entry
 * `{body, description, name, updated}`: name `<group>/<slug>`, description one line, body
 * ending with a line break, updated a time in milliseconds (not kept: Engram's history
 * starts at the import). Format read from ggml-org/llama.cpp tools/ui (memory.service.ts,
 * MemoryService.exportEntries, commit 22249cf997b78f8e30257efe8bd3b367ea3bf69e); it carries
 * no version, so a file that names one, or is not of this shape, is refused whole.
 */

import type { Policy } from '../policy.js';
import { EXPORT_FORMAT } from '../transfer.js';
import {
  badSource,
  buildPlan,
  type Draft,
  type ImportFile,
  type ImportPlan,
  type PlanOptions,
  textOf,
} from './plan.js';

interface WebuiEntry {
  readonly name: string;
  readonly description: string;
  readonly body: string;
}

const isString = (value: unknown): value is string => typeof value === 'string';

function parseJson(file: ImportFile): unknown {
  const text = textOf(file);
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
  if (!Array.isArray(record.entries)) {
    throw badSource(`${file.path} has no "entries" list: not a llama.cpp WebUI memory export`);
  }
  return record.entries;
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
    throw badSource(`${where}: the name ${JSON.stringify(name)} is not <group>/<slug>`);
  }
  return { name: name.trim(), description, body };
}

export function parseLlamaWebui(files: readonly ImportFile[], policy: Policy, options: PlanOptions = {}): ImportPlan {
  const lists = files.map((file) => ({ file, entries: entriesOf(file) }));
  if (lists.every(({ entries }) => entries.length === 0))
    throw badSource('the file holds no entry ("entries" is empty)');
  // Drafted one at a time as the plan takes them: a file of more entries than the cap is refused at the first one over it.
  function* drafts(): Generator<Draft> {
    for (const { file, entries } of lists) {
      for (const [index, entry] of entries.entries()) {
        const { name, description, body } = entryOf(file, entry, index);
        const [group = '', slug = ''] = name.split('/');
        yield {
          source: `entry ${index + 1}: ${JSON.stringify(name)}`,
          group,
          slug,
          description,
          body,
          notes: description.trim() === '' ? ['no description: described by its name'] : [],
        };
      }
    }
  }
  return buildPlan('llama-webui', drafts(), policy, options);
}
