/**
 * README.md tells a newcomer whose `npm ci` has to compile better-sqlite3 (no prebuilt
 * binary for their system or Node.js) what that needs, before the first command they run.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('README.md on building better-sqlite3', () => {
  it('names Python 3, make and a C++ compiler, before connecting any assistant', () => {
    const install = README.split(/^## Connect your assistants$/m)[0] ?? '';
    const section = install.split(/^### If `npm ci` builds better-sqlite3 from source$/m)[1] ?? '';
    expect(section).toMatch(/\*\*Python 3\*\*, \*\*make\*\* and a \*\*C\+\+ compiler\*\*/);
    expect(section).toContain('sudo apt-get install python3 make g++');
    expect(section).toContain('xcode-select --install');
  });
});
