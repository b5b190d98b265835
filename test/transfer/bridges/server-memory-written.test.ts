/**
 * The MCP memory server's JSONL as the real server writes it: `@modelcontextprotocol/server-memory`
 * run as a child process (driven through the MCP SDK) writes a file, and parseServerMemory
 * reads its entities, observations and relations into entries. The parser's other cases,
 * on files written by hand, are in server-memory.test.ts.
 */

import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_POLICY } from '../../../src/memory/model/policy.js';
import { parseServerMemory } from '../../../src/transfer/bridges/server-memory.js';
import { writeServerMemory } from '../../helpers/server-memory.js';
import { tempDir } from '../../helpers/temp-dir.js';

describe('parseServerMemory on a file the real server wrote', () => {
  it('turns entities, observations and relations into entries', async () => {
    const dir = tempDir();
    const file = dir.file('memory.jsonl');
    await writeServerMemory(file, {
      entities: [
        { name: 'Ada Lovelace', entityType: 'person', observations: ['Wrote the first program'] },
        { name: 'Analytical Engine', entityType: 'project', observations: ['Designed by Babbage'] },
        { name: 'Tea', entityType: 'preference', observations: ['Earl Grey, no sugar'] },
      ],
      relations: [{ from: 'Ada Lovelace', to: 'Analytical Engine', relationType: 'works_on' }],
      observations: [{ entityName: 'Ada Lovelace', contents: ['Born 1815'] }],
    });
    const plan = parseServerMemory([{ path: 'memory.jsonl', bytes: readFileSync(file) }], DEFAULT_POLICY);
    expect(plan.entries).toEqual([
      {
        name: 'people/ada-lovelace',
        description: 'Ada Lovelace (person)',
        body: 'Wrote the first program\nBorn 1815\n→ works_on Analytical Engine\n',
      },
      { name: 'areas/analytical-engine', description: 'Analytical Engine (project)', body: 'Designed by Babbage\n' },
      { name: 'topics/tea', description: 'Tea (preference)', body: 'Earl Grey, no sugar\n' },
    ]);
    expect(plan.items[0]).toEqual({
      source: 'line 1: entity "Ada Lovelace" (person)',
      names: ['people/ada-lovelace'],
      notes: ['"Ada Lovelace" is not a valid slug: made ada-lovelace'],
    });
  });
});
