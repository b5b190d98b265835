/**
 * The body a merge leaves (model/merge-text.ts): the receiving body, a heading naming the
 * entry merged in, its description and its body, each part once, blank lines between.
 */

import { describe, expect, it } from 'vitest';
import { mergedBody } from '../../../src/memory/model/merge-text.js';

const FROM = { name: 'projects/alpha', description: 'The alpha project', body: 'Goals: ship.\n' };

describe('mergedBody', () => {
  it('puts the heading, description and body after the receiving body', () => {
    expect(mergedBody('Alpha notes.\n', FROM)).toBe(
      'Alpha notes.\n\n## Merged from projects/alpha\n\nThe alpha project\n\nGoals: ship.\n',
    );
  });

  it('leaves out the empty parts: a receiving body or a merged body that is empty', () => {
    expect(mergedBody('', FROM)).toBe('## Merged from projects/alpha\n\nThe alpha project\n\nGoals: ship.\n');
    expect(mergedBody('Alpha.\n\n\n', { ...FROM, body: '' })).toBe(
      'Alpha.\n\n## Merged from projects/alpha\n\nThe alpha project\n',
    );
  });

  it('keeps each body as it is within, multi-byte characters and inner blank lines too', () => {
    const body = 'Café ☕\n\n  indented\n';
    expect(mergedBody(body, { ...FROM, body })).toBe(
      'Café ☕\n\n  indented\n\n## Merged from projects/alpha\n\nThe alpha project\n\nCafé ☕\n\n  indented\n',
    );
  });
});
