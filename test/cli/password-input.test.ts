/**
 * Where a new password comes from: a pipe or a file is read whole, without exactly one
 * trailing newline; an empty one means "no password" only where that is allowed (user
 * add without --password-stdin); at a terminal it is asked for twice and refused when
 * the two differ; --password-stdin at a terminal is a usage error.
 */

import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/cli/output.js';
import { type PasswordSource, readNewPassword, withoutFinalNewline } from '../../src/cli/password-input.js';
import { EngramError } from '../../src/memory/model/errors.js';

function pipe(text: string): PasswordSource {
  return {
    interactive: false,
    readAll: () => text,
    ask: () => Promise.reject(new Error('a pipe is never asked')),
  };
}

function terminal(...answers: string[]): PasswordSource & { prompts: string[] } {
  const prompts: string[] = [];
  return {
    prompts,
    interactive: true,
    readAll: () => {
      throw new Error('a terminal is never read whole');
    },
    ask: async (prompt) => {
      prompts.push(prompt);
      const answer = answers.shift();
      if (answer === undefined) throw new Error('asked once too often');
      return answer;
    },
  };
}

const ADD = { user: 'alice', fromStdin: false, optional: true };
const SET = { user: 'alice', fromStdin: false, optional: false };

describe('withoutFinalNewline', () => {
  it('strips exactly one trailing \\n or \\r\\n, and nothing else', () => {
    expect(withoutFinalNewline('secret words\n')).toBe('secret words');
    expect(withoutFinalNewline('secret words\r\n')).toBe('secret words');
    expect(withoutFinalNewline('secret words\n\n')).toBe('secret words\n');
    expect(withoutFinalNewline('secret words\r\n\r\n')).toBe('secret words\r\n');
    expect(withoutFinalNewline('secret words\r')).toBe('secret words\r');
    expect(withoutFinalNewline(' secret words ')).toBe(' secret words ');
    expect(withoutFinalNewline('')).toBe('');
    expect(withoutFinalNewline('\n')).toBe('');
  });
});

describe('readNewPassword from a pipe or a file', () => {
  it('reads stdin whole, without one trailing newline, with or without --password-stdin', async () => {
    for (const request of [ADD, SET, { ...ADD, fromStdin: true }, { ...SET, fromStdin: true }]) {
      expect(await readNewPassword(request, pipe('  spaces kept  \n'))).toBe('  spaces kept  ');
      expect(await readNewPassword(request, pipe('windows line\r\n'))).toBe('windows line');
      expect(await readNewPassword(request, pipe('two newlines\n\n'))).toBe('two newlines\n');
      expect(await readNewPassword(request, pipe('no newline'))).toBe('no newline');
    }
  });

  it('reads an empty stdin as no password for user add, and as an empty password otherwise', async () => {
    expect(await readNewPassword(ADD, pipe(''))).toBeUndefined();
    expect(await readNewPassword({ ...ADD, fromStdin: true }, pipe(''))).toBe('');
    expect(await readNewPassword(SET, pipe(''))).toBe('');
    expect(await readNewPassword(ADD, pipe('\n'))).toBe('');
  });
});

describe('readNewPassword at a terminal', () => {
  it('asks twice, naming the user, and returns what was typed', async () => {
    const source = terminal('typed with care', 'typed with care');
    expect(await readNewPassword(SET, source)).toBe('typed with care');
    expect(source.prompts).toEqual(['New password for alice: ', 'The same password again: ']);
  });

  it('refuses two passwords that differ', async () => {
    const refusal = readNewPassword(ADD, terminal('typed with care', 'typed with cake'));
    await expect(refusal).rejects.toThrow(EngramError);
    await expect(refusal).rejects.toThrow('the two passwords differ; nothing was changed.');
  });

  it('refuses --password-stdin as a usage error, asking nothing', async () => {
    const source = terminal();
    const refusal = readNewPassword({ ...SET, fromStdin: true }, source);
    await expect(refusal).rejects.toThrow(UsageError);
    await expect(refusal).rejects.toThrow(
      /^--password-stdin reads the password from a pipe or a file, but stdin is a terminal/,
    );
    expect(source.prompts).toEqual([]);
  });
});
