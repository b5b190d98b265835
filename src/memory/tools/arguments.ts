/**
 * Tool arguments as models send them — sometimes a JSON string, sometimes with the
 * wrong types or made-up keys. Each problem becomes an INVALID_ARGUMENT error that says
 * what was wrong and how to call again; nothing reaches the Memory service unchecked.
 */

import type { WriteRequest } from '../model/edit.js';
import { EngramError } from '../model/errors.js';
import type { ToolName } from './definitions.js';

export interface OpenArguments {
  readonly names: readonly string[];
}
export interface DropArguments {
  readonly name: string;
}

const KEYS: Readonly<Record<ToolName, readonly string[]>> = {
  memory_open: ['names'],
  memory_write: ['name', 'description', 'new', 'old'],
  memory_drop: ['name'],
};

const EXAMPLES: Readonly<Record<ToolName, string>> = {
  memory_open: '{"names": ["areas/qwentts-cpp", "people/allozaur"]}, or {} for the index',
  memory_write:
    '{"name": "topics/preferences", "description": "How the user likes to work", "new": "Prefers short answers."}',
  memory_drop: '{"name": "areas/old-project"}',
};

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

function invalid(message: string): EngramError {
  return new EngramError('INVALID_ARGUMENT', message);
}

/** The arguments object: accepts an object, a JSON string of one, or nothing. */
function argumentObject(tool: ToolName, raw: unknown): Record<string, unknown> {
  let value = raw;
  if (typeof value === 'string') {
    if (value.trim() === '') value = {};
    else {
      try {
        value = JSON.parse(value);
      } catch {
        throw invalid(`${tool} arguments are not valid JSON. Send an object such as ${EXAMPLES[tool]}.`);
      }
    }
  }
  if (value === undefined || value === null) value = {};
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalid(`${tool} arguments must be an object, not ${kindOf(value)}. For example ${EXAMPLES[tool]}.`);
  }
  const args = value as Record<string, unknown>;
  const unknown = Object.keys(args).filter((key) => !KEYS[tool].includes(key));
  if (unknown.length > 0) {
    throw invalid(
      `${tool} does not take ${unknown.map((key) => JSON.stringify(key)).join(', ')}. ` +
        `Its arguments are ${KEYS[tool].join(', ')}; for example ${EXAMPLES[tool]}.`,
    );
  }
  return args;
}

function optionalString(tool: ToolName, args: Record<string, unknown>, key: string, role: string): string | undefined {
  const value = args[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw invalid(`${tool}: ${key} must be a string (${role}), not ${kindOf(value)}. For example ${EXAMPLES[tool]}.`);
  }
  return value;
}

function requiredName(tool: ToolName, args: Record<string, unknown>): string {
  const name = optionalString(tool, args, 'name', 'the entry name, <group>/<slug>');
  if (name === undefined) {
    throw invalid(`${tool} needs name, the entry name as <group>/<slug>. For example ${EXAMPLES[tool]}.`);
  }
  return name;
}

/**
 * `names` as models send it: an array, or by mistake one name as a string, or the array
 * JSON-encoded in a string (DESIGN §2: one string is one name).
 */
function namesValue(names: unknown): unknown {
  if (typeof names !== 'string') return names;
  if (names.trim().startsWith('[')) {
    try {
      return JSON.parse(names) as unknown;
    } catch {
      // Not JSON after all: one name, which the name check then explains.
    }
  }
  return [names];
}

export function parseOpenArguments(raw: unknown): OpenArguments {
  const args = argumentObject('memory_open', raw);
  const names = namesValue(args.names);
  if (names === undefined || names === null) return { names: [] };
  if (!Array.isArray(names) || names.some((name) => typeof name !== 'string')) {
    throw invalid(
      `memory_open: names must be an array of strings, not ${Array.isArray(names) ? 'an array with non-strings' : kindOf(names)}. ` +
        `For example ${EXAMPLES.memory_open}.`,
    );
  }
  return { names };
}

/** memory_write's arguments, as the one write request every door hands the Memory service. */
export function parseWriteArguments(raw: unknown): WriteRequest {
  const tool = 'memory_write';
  const args = argumentObject(tool, raw);
  const name = requiredName(tool, args);
  const description = optionalString(tool, args, 'description', 'one line on what the entry covers');
  const text = optionalString(tool, args, 'new', 'the replacement text, or the lines to append');
  const old = optionalString(tool, args, 'old', 'the exact text to replace or remove');
  return {
    name,
    ...(description === undefined ? {} : { description }),
    ...(text === undefined ? {} : { new: text }),
    ...(old === undefined ? {} : { old }),
  };
}

export function parseDropArguments(raw: unknown): DropArguments {
  const args = argumentObject('memory_drop', raw);
  return { name: requiredName('memory_drop', args) };
}
