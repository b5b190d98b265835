/**
 * Claude Code's memory folder (~/.claude/projects/<project>/memory), laid out as Claude Code
 * writes it: MEMORY.md (the index it loads, facts and links to topic files) and topic
 * files, some with the front matter (name, description, type) newer versions write.
 */

import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../../src/memory/model/policy.js';
import { parseClaudeCode } from '../../../src/transfer/bridges/claude-code.js';
import { BINARY, CLAUDE_CODE_FOLDER, files } from './fixtures.js';

describe('parseClaudeCode', () => {
  it('makes MEMORY.md and each topic file an entry, described by front matter, link text or first heading', () => {
    const plan = parseClaudeCode(files(CLAUDE_CODE_FOLDER), DEFAULT_POLICY);
    expect(plan.entries).toEqual([
      { name: 'topics/claude-code-memory', description: 'Memory', body: CLAUDE_CODE_FOLDER['MEMORY.md'] },
      {
        name: 'topics/debugging',
        description: 'CORS errors in local are the Vite proxy',
        body: CLAUDE_CODE_FOLDER['debugging.md'],
      },
      { name: 'areas/deploy', description: 'How the site is deployed', body: '\nDeploys take 4 minutes.\n' },
      { name: 'topics/user_role', description: 'The user is a data scientist', body: 'Focus on observability.\n' },
    ]);
    expect(plan.items.find((item) => item.source === 'user_role.md')?.notes).toEqual(['not linked from MEMORY.md']);
    expect(plan.items.at(-1)).toEqual({
      source: 'gone.md',
      names: [],
      notes: ['linked from MEMORY.md but not in the folder'],
      problem: 'not-an-entry',
    });
  });

  it('names the index entry as asked', () => {
    const plan = parseClaudeCode(files({ 'MEMORY.md': '- fact\n' }), DEFAULT_POLICY, { name: 'areas/My Project' });
    expect(plan.entries).toEqual([{ name: 'areas/my-project', description: '- fact', body: '- fact\n' }]);
  });

  it('leaves out files that are not topic files, and refuses a folder without MEMORY.md or with a binary topic file', () => {
    const plan = parseClaudeCode(files({ 'MEMORY.md': 'x\n', 'img/a.png': 'x', 'notes.txt': 'x' }), DEFAULT_POLICY);
    expect(plan.items.filter((item) => item.problem).map((item) => item.source)).toEqual(['img/a.png', 'notes.txt']);
    expect(() => parseClaudeCode(files({ 'debugging.md': 'x' }), DEFAULT_POLICY)).toThrow(
      'no MEMORY.md in the folder: name a Claude Code memory folder (…/memory); nothing was imported.',
    );
    expect(() => parseClaudeCode(files({ 'MEMORY.md': 'x', 'a.md': BINARY }), DEFAULT_POLICY)).toThrow(
      'a.md is not UTF-8 text (a binary file?); nothing was imported.',
    );
  });
});
