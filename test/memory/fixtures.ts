/**
 * Shared helpers for the core and tools tests: a Memory over the in-process store,
 * a snapshot of everything a user has (to prove a refusal changed nothing), and an
 * assertion that an operation is refused with a given code and message.
 */

import { expect } from 'vitest';
import { createApp } from '../../src/app.js';
import type { Caller, Memory } from '../../src/memory/memory.js';
import { EngramError, type ErrorCode } from '../../src/memory/model/errors.js';
import { DEFAULT_POLICY, type Policy } from '../../src/memory/model/policy.js';
import type { StoredEntry } from '../../src/memory/port.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';

export const CALLER: Caller = { user: 'alice', label: 'test' };
export const READ_ONLY: Caller = { user: 'alice', label: 'viewer', readOnly: true };

export function newMemory(policy: Partial<Policy> = {}): Memory {
  let clock = 1_000;
  return createApp({ store: openMemoryStore(), policy, now: () => clock++ }).memory;
}

export function policyWith(overrides: Partial<Policy>): Policy {
  return { ...DEFAULT_POLICY, ...overrides };
}

/** Creates entries: name -> [description, body]. */
export async function seed(memory: Memory, entries: Record<string, [string, string]>, caller = CALLER): Promise<void> {
  for (const [name, [description, body]] of Object.entries(entries)) {
    await memory.write(caller, { name, description, new: body });
  }
}

export interface Snapshot {
  readonly index: unknown;
  readonly entries: StoredEntry[];
}

/** The user's index and every entry in full, straight from the store. */
export async function snapshot(memory: Memory, user = CALLER.user): Promise<Snapshot> {
  const index = await memory.store.index(user);
  const entries = await memory.store.get(
    user,
    index.map((row) => row.name),
  );
  return { index, entries: entries.sort((a, b) => a.name.localeCompare(b.name)) };
}

/** Expects `action` to throw an EngramError with this code (and message, if given). */
export async function expectEngramError(
  action: () => unknown,
  code: ErrorCode,
  message?: string | RegExp,
): Promise<EngramError> {
  let caught: unknown;
  try {
    await action();
  } catch (error) {
    caught = error;
  }
  expect(caught, 'expected the operation to be refused').toBeInstanceOf(EngramError);
  const error = caught as EngramError;
  expect(error.code).toBe(code);
  if (typeof message === 'string') expect(error.message).toBe(message);
  else if (message) expect(error.message).toMatch(message);
  return error;
}

/** Like expectEngramError, and the memory is exactly as it was before the attempt. */
export async function expectRefused(
  memory: Memory,
  action: () => unknown,
  code: ErrorCode,
  message?: string | RegExp,
): Promise<EngramError> {
  const before = await snapshot(memory);
  const error = await expectEngramError(action, code, message);
  expect(await snapshot(memory)).toEqual(before);
  return error;
}
