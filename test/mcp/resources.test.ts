/**
 * Entry URIs round-trip through the SDK's UriTemplate for any name (a `/`, unicode, `%`),
 * and a failure of the tool handler itself is the server's internal error, never a
 * "not found" that would send the model hunting for another name. Names complete from
 * the Memory service (Memory.names), not from the index's text; a failure there is an
 * internal error that does not repeat the failure's own words. A change held for review is in no
 * resource and no completion until approved.
 */

import { ProtocolError, ResourceNotFoundError, UriTemplate } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryResources, ENTRY_TEMPLATE, entryNameOf, entryUri } from '../../src/mcp/resources.js';
import { createMemory } from '../../src/memory/memory.js';
import { EngramError } from '../../src/memory/model/errors.js';
import { createToolHandler, type ToolHandler } from '../../src/memory/tools/handler.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';

const caller = { user: 'ada', label: 'test' };

describe('entry URIs', () => {
  it('are the SDK template’s expansion, and give back the name', () => {
    const template = new UriTemplate(ENTRY_TEMPLATE);
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', minLength: 1 }), (name) => {
        const uri = entryUri(name);
        expect(uri).toBe(template.expand({ name }));
        expect(entryNameOf(uri)).toBe(name);
        expect(decodeURIComponent(String(template.match(uri)?.name))).toBe(name);
      }),
    );
    expect(entryUri('topics/tea')).toBe('memory://entry/topics%2Ftea');
    expect(entryUri('people/zoë')).toBe('memory://entry/people%2Fzo%C3%AB');
    expect(entryUri('topics/100%')).toBe('memory://entry/topics%2F100%25');
  });

  it('are read with a plain / too, and only under memory://entry/', () => {
    expect(entryNameOf('memory://entry/topics/tea')).toBe('topics/tea');
    expect(entryNameOf('memory://entry/topics%2')).toBeUndefined();
    expect(entryNameOf('memory://index')).toBeUndefined();
    expect(entryNameOf('file:///topics/tea')).toBeUndefined();
  });
});

describe('a failing handler', () => {
  const failing: ToolHandler = async () => ({
    text: 'memory_open failed because of an internal error. Try again; if it fails again, tell the user.',
    isError: true,
    code: 'INTERNAL',
  });
  const memory = createMemory({ store: openMemoryStore() });
  const resources = createMemoryResources(failing, memory);

  it.each(['memory://index', 'memory://entry/topics%2Ftea'])('is an internal error reading %s', async (uri) => {
    const error = await resources.read(caller, uri).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).not.toBeInstanceOf(ResourceNotFoundError);
    expect(error).toMatchObject({ code: -32603, message: expect.stringContaining('internal error') });
  });

  it('is not asked to complete a name: the Memory service lists the names', async () => {
    await memory.write(caller, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    expect(await resources.completeName(caller, 'te')).toEqual({
      completion: { values: ['topics/tea'], total: 1, hasMore: false },
    });
  });
});

describe('completing a name', () => {
  const idle: ToolHandler = async () => expect.fail('completion went through the tool handler');

  it('answers at most 100 names, with how many matched', async () => {
    const names = Array.from({ length: 105 }, (_, i) => `notes/n${String(i).padStart(3, '0')}`);
    const resources = createMemoryResources(idle, {
      names: async (_caller, typed, limit = 100) => {
        expect(typed).toBe('n');
        return { names: names.slice(0, Math.min(limit, 100)), total: names.length };
      },
    });
    expect(await resources.completeName(caller, 'n')).toEqual({
      completion: { values: names.slice(0, 100), total: 105, hasMore: true },
    });
  });

  it('is an internal error when the Memory service fails, without its words', async () => {
    const resources = createMemoryResources(idle, {
      names: async () => {
        throw new Error('SQLITE_IOERR: disk I/O error at /home/ada/memory.db');
      },
    });
    const error = await resources.completeName(caller, 'to').catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ code: -32603, message: expect.stringContaining('internal error') });
    expect((error as Error).message).not.toMatch(/SQLITE|ada/);
  });

  it('reports an unexpected failure where the tool handler reports its own, and not an Engram error', async () => {
    const reported: unknown[] = [];
    const failure = new Error('SQLITE_IOERR: disk I/O error');
    let next: Error = failure;
    const resources = createMemoryResources(
      idle,
      {
        names: async () => {
          throw next;
        },
      },
      (error) => reported.push(error),
    );
    await resources.completeName(caller, 'to').catch(() => {});
    expect(reported).toEqual([failure]);
    next = new EngramError('STORE_BUSY', 'The database is busy.');
    await resources.completeName(caller, 'to').catch(() => {});
    expect(reported).toEqual([failure]);
  });
});

describe('changes held for review', () => {
  it('are in no resource and no completion until approved', async () => {
    const store = openMemoryStore();
    const memory = createMemory({ store, proposals: store.proposals });
    const resources = createMemoryResources(createToolHandler(memory), memory);
    const reviewed = { ...caller, label: 'Claude', review: true };
    await memory.write(caller, { name: 'topics/tea', description: 'Tea', new: 'Green.' });
    const { proposal } = await memory.write(reviewed, { name: 'topics/toast', description: 'Toast', new: 'Rye.' });
    await memory.write(reviewed, { name: 'topics/tea', new: 'Matcha.' });

    const index = await resources.read(reviewed, 'memory://index');
    const tea = await resources.read(reviewed, 'memory://entry/topics%2Ftea');
    expect(JSON.stringify(index)).not.toContain('toast');
    expect(JSON.stringify(tea)).not.toContain('Matcha');
    await expect(resources.read(reviewed, 'memory://entry/topics%2Ftoast')).rejects.toBeInstanceOf(
      ResourceNotFoundError,
    );
    expect((await resources.completeName(reviewed, 'to')).completion.values).toEqual(['topics/tea']);

    await memory.review.approve(caller, proposal!.id);
    expect((await resources.completeName(reviewed, 'to')).completion.values).toEqual(['topics/tea', 'topics/toast']);
  });
});
