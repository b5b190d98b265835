/** The words of a command line to run again, as a POSIX shell reads them back. */

import { describe, expect, it } from 'vitest';
import { shellWord } from '../../src/cli/repeat-command.js';

describe('shellWord', () => {
  it('leaves a safe word bare and single-quotes any other, a quote inside included', () => {
    expect(shellWord('/tmp/memory.db')).toBe('/tmp/memory.db');
    expect(shellWord('postgres://ada@db:5432/engram')).toBe('postgres://ada@db:5432/engram');
    expect(shellWord('my memory.db')).toBe("'my memory.db'");
    expect(shellWord("it's")).toBe(`'it'\\''s'`);
    expect(shellWord('$HOME;rm')).toBe("'$HOME;rm'");
    expect(shellWord('')).toBe("''");
  });
});
