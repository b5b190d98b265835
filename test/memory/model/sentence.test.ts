/** asSentence: a message quoted into another ends with one full stop, never two. */

import { describe, expect, it } from 'vitest';
import { asSentence } from '../../../src/memory/model/text.js';

describe('asSentence', () => {
  it('adds a full stop only where none ends the text', () => {
    expect(asSentence('Invalid API Key')).toBe('Invalid API Key.');
    expect(asSentence('Incorrect API key provided.')).toBe('Incorrect API key provided.');
    expect(asSentence('Is the server running? ')).toBe('Is the server running?');
    expect(asSentence('Stop!')).toBe('Stop!');
    expect(asSentence('and so on…')).toBe('and so on…');
  });
});
