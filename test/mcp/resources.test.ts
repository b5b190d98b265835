/**
 * Entry URIs round-trip through the SDK's UriTemplate for any name (a `/`, unicode, `%`),
 * and a failure of the tool handler itself is the server's internal error, never a
 * "not found" that would send the model hunting for another name.
 */

import { ProtocolError, ResourceNotFoundError, UriTemplate } from '@modelcontextprotocol/server';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryResources, ENTRY_TEMPLATE, entryNameOf, entryUri } from '../../src/mcp/resources.js';
import type { ToolHandler } from '../../src/tools/handler.js';

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
  const resources = createMemoryResources(failing);

  it.each(['memory://index', 'memory://entry/topics%2Ftea'])('is an internal error reading %s', async (uri) => {
    const error = await resources.read(caller, uri).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).not.toBeInstanceOf(ResourceNotFoundError);
    expect(error).toMatchObject({ code: -32603, message: expect.stringContaining('internal error') });
  });

  it('is an internal error completing a name', async () => {
    await expect(resources.completeName(caller, 'to')).rejects.toMatchObject({ code: -32603 });
  });
});
