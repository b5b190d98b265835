/**
 * ChatGPT's "Manage memories" list as text: one memory a line into the entry the user
 * names, bullets and blank lines dropped, repeated lines reported and kept once, split
 * with --split when over the cap; an empty or binary file refused.
 */

import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../../src/memory/model/policy.js';
import { parseChatgpt } from '../../../src/transfer/bridges/chatgpt.js';
import { BINARY, files } from './fixtures.js';

const LIST =
  'Is a data scientist in Lisbon.\n\n• Prefers metric units.\r\n- Has a dog named Rex.\nPrefers metric units.\n';

describe('parseChatgpt', () => {
  it('makes one entry of the memories, one a line, in topics/chatgpt-memories', () => {
    const plan = parseChatgpt(files({ 'memories.txt': LIST }), DEFAULT_POLICY);
    expect(plan.entries).toEqual([
      {
        name: 'topics/chatgpt-memories',
        description: 'What ChatGPT remembered about the user (3 memories)',
        body: 'Is a data scientist in Lisbon.\nPrefers metric units.\nHas a dog named Rex.\n',
      },
    ]);
    expect(plan.items.at(-1)).toEqual({
      source: 'line 5',
      names: [],
      notes: ['the same memory as line 3: kept once'],
      problem: 'duplicate',
    });
  });

  it('uses the name given, made valid', () => {
    const plan = parseChatgpt(files({ 'm.txt': 'x\n' }), DEFAULT_POLICY, { name: 'People/Me Myself' });
    expect(plan.entries[0]?.name).toBe('people/me-myself');
  });

  it('refuses a list over the cap without --split, and splits it with', () => {
    const many = Array.from({ length: 500 }, (_, i) => `Memory number ${i}: ${'x'.repeat(40)}`).join('\n');
    expect(parseChatgpt(files({ 'm.txt': many }), DEFAULT_POLICY).items[0]?.problem).toBe('too-large');
    const split = parseChatgpt(files({ 'm.txt': many }), DEFAULT_POLICY, { split: true });
    expect(split.entries.map((entry) => entry.name)).toEqual(['topics/chatgpt-memories', 'topics/chatgpt-memories-2']);
    expect(
      split.entries
        .map((entry) => entry.body)
        .join('')
        .split('\n'),
    ).toHaveLength(501);
  });

  it('refuses an empty list and a binary file', () => {
    expect(() => parseChatgpt(files({ 'm.txt': '\n - \n' }), DEFAULT_POLICY)).toThrow(
      'the file holds no memory (one a line); nothing was imported.',
    );
    expect(() => parseChatgpt(files({ 'm.txt': BINARY }), DEFAULT_POLICY)).toThrow('m.txt is not UTF-8 text');
  });
});
