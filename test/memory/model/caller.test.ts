/** Labels that clients choose for themselves are recorded in history: one safe line each. */

import { describe, expect, it } from 'vitest';
import { actorLabel } from '../../../src/memory/model/caller.js';

describe('actorLabel', () => {
  it('keeps an ordinary client name', () => {
    expect(actorLabel('claude-code', 'mcp')).toBe('claude-code');
  });

  it('folds lines and removes control characters, such as terminal escapes', () => {
    expect(actorLabel('evil\u001b[31m\nclient\u0007', 'mcp')).toBe('evil [31m client');
  });

  it('caps the label at 100 characters', () => {
    expect(actorLabel('é'.repeat(150), 'mcp')).toBe('é'.repeat(100));
  });

  it('falls back when nothing is left', () => {
    expect(actorLabel(undefined, 'mcp')).toBe('mcp');
    expect(actorLabel(' \u0000\t', 'http')).toBe('http');
  });
});
