/** The nesting check every door runs before parsing a JSON request. */

import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../src/json/json-nesting.js';

const nested = (depth: number) => `${'{"a":['.repeat(depth)}${']}'.repeat(depth)}`;

describe('nestsDeeperThan', () => {
  it('counts arrays and objects, up to the limit and one past it', () => {
    expect(nestsDeeperThan('[[[]]]', 3)).toBe(false);
    expect(nestsDeeperThan('[[[[]]]]', 3)).toBe(true);
    expect(nestsDeeperThan('{"a":{"b":[1,{"c":2}]}}', 4)).toBe(false);
    expect(nestsDeeperThan('{"a":{"b":[1,{"c":[]}]}}', 4)).toBe(true);
    expect(nestsDeeperThan('[[],[],[],[]]', 2)).toBe(false);
  });

  it('ignores brackets inside strings, escaped quotes and backslashes included', () => {
    expect(nestsDeeperThan(JSON.stringify({ a: '[[[[{{{{' }), 1)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify({ a: 'say \\"[[[[\\" and \\\\', b: '\\' }), 1)).toBe(false);
    expect(nestsDeeperThan(JSON.stringify(['\\', [[]]]), 2)).toBe(true);
  });

  it('refuses 50,000 levels and accepts what an MCP request needs', () => {
    expect(nestsDeeperThan(`${'['.repeat(50_000)}${']'.repeat(50_000)}`, MAX_JSON_DEPTH)).toBe(true);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH / 2), MAX_JSON_DEPTH)).toBe(false);
    expect(nestsDeeperThan(nested(MAX_JSON_DEPTH / 2 + 1), MAX_JSON_DEPTH)).toBe(true);
  });
});
