// What the web UI builds its API paths and links from (web/src/lib/paths.ts): a name must
// never steer a call to another route.
import { describe, expect, it } from 'vitest';
import { namePath, pathSegment } from '../../web/src/lib/paths';

describe('pathSegment', () => {
  it('encodes what would end or leave a segment', () => {
    expect(pathSegment('a/b?c#d%e')).toBe('a%2Fb%3Fc%23d%25e');
    expect(pathSegment('tok_123')).toBe('tok_123');
  });

  it.each(['', '.', '..'])('refuses %j, which no encoding keeps in place', (value) => {
    expect(() => pathSegment(value)).toThrow('cannot be part of an address');
  });
});

describe('namePath', () => {
  it('encodes the group and the slug, a / in the slug staying inside it', () => {
    expect(namePath('people/ada')).toBe('people/ada');
    expect(namePath('notes/a/b c')).toBe('notes/a%2Fb%20c');
  });

  it('refuses a name without a group, and one a segment of which is . or ..', () => {
    expect(() => namePath('ada')).toThrow('is not an entry name');
    expect(() => namePath('../api')).toThrow('cannot be part of an address');
    expect(() => namePath('people/..')).toThrow('cannot be part of an address');
  });
});
