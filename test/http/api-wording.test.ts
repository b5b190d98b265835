/**
 * Refusals in the REST API's words (issue #10, item 2): a script or the web UI is told
 * the route to call, never a CLI command or a tool call.
 */

import { describe, expect, it } from 'vitest';
import { apiMessage, READ_ONLY_TOKEN } from '../../src/http/api/wording.js';
import { assertWritable } from '../../src/memory/model/caller.js';
import { EngramError, type ErrorDetail } from '../../src/memory/model/errors.js';
import { didYouMean } from '../../src/memory/model/format.js';

const worded = (detail: ErrorDetail) => apiMessage(new EngramError('NOT_FOUND', 'core words', detail));

describe('apiMessage', () => {
  it.each<[ErrorDetail, string]>([
    [
      { reason: 'restore-in-trash', name: 'people/ada' },
      'people/ada is in the trash: undrop it first (POST /api/trash/people/ada/undrop), then restore.',
    ],
    [
      { reason: 'undrop-taken', name: 'topics/old' },
      'topics/old cannot be undropped: a live entry has taken the name since. Drop the live one first ' +
        '(GET /api/entries/topics/old shows it), then undrop again.',
    ],
    [{ reason: 'undrop-missing', name: 'topics/me' }, 'topics/me is not in the trash. GET /api/trash lists what is.'],
    [
      { reason: 'nul-character', field: 'new' },
      '"body" contains a NUL character (\\u0000), which memory cannot hold: remove it and send it again.',
    ],
    [
      { reason: 'nul-character', field: 'description' },
      '"description" contains a NUL character (\\u0000), which memory cannot hold: remove it and send it again.',
    ],
    [
      { reason: 'drop-not-found', name: 'topics/tee', suggestions: ['topics/tea'] },
      `topics/tee not found, nothing was dropped.${didYouMean(['topics/tea'])} GET /api/entries lists every entry.`,
    ],
    [
      { reason: 'no-such-revision', name: 'topics/me', revision: 9, first: 3, last: 3 },
      'topics/me has no revision 9; the revisions kept are 3. GET /api/entries/topics/me/history lists them.',
    ],
    [
      { reason: 'user-cap', name: 'topics/me', totalAfter: 5_000, cap: 4_096 },
      'topics/me would bring this memory to 5,000 bytes (names, descriptions and bodies); the cap is 4,096. ' +
        'Make room first: shorten or drop entries that are no longer needed (GET /api/entries shows their sizes), then try again.',
    ],
    [
      { reason: 'entry-cap', name: 'topics/me', entriesAfter: 1_001, cap: 1_000 },
      'topics/me would make 1,001 entries in this memory; the cap is 1,000. Make room first: drop entries that are ' +
        'no longer needed (GET /api/entries lists them), then try again.',
    ],
    [
      {
        reason: 'recovered-over-cap',
        operation: 'restore',
        name: 'topics/me',
        revision: 2,
        part: 'body',
        size: 20_000,
        cap: 16_384,
      },
      'topics/me would be 20,000 bytes; the cap is 16,384. Revision 2 cannot be restored as it is, under the caps in ' +
        'force now: GET /api/entries/topics/me/history shows revision 2; copy what you need from it into an entry ' +
        'within the caps; nothing was restored.',
    ],
    [
      {
        reason: 'recovered-over-cap',
        operation: 'undrop',
        name: 'topics/me',
        revision: 4,
        part: 'description',
        size: 300,
        cap: 200,
      },
      'The description of topics/me is 300 characters; the cap is 200. topics/me cannot be undropped as it is, under ' +
        'the caps in force now: GET /api/entries/topics/me/history shows revision 4; copy what you need from it into ' +
        'an entry within the caps; nothing was undropped.',
    ],
  ])('words %j by route', (detail, message) => {
    const text = worded(detail);
    expect(text).toBe(message);
    expect(text).not.toMatch(/engram |memory_(open|write|drop)/);
  });

  it('keeps core words where nothing says how to call', () => {
    expect(apiMessage(new EngramError('INVALID_NAME', 'core words'))).toBe('core words');
  });

  it("keeps core words on purpose where they are already a person's", () => {
    expect(worded({ reason: 'stale-revision', name: 'topics/me', expected: 2, current: 3 })).toBe('core words');
    expect(worded({ reason: 'sign-in-throttled', retryAfterSeconds: 30 })).toBe('core words');
  });

  it('tells a read-only token what the router tells it, not what an MCP client is told', () => {
    let refusal: unknown;
    try {
      assertWritable({ user: 'alice', label: 'script', readOnly: true });
    } catch (error) {
      refusal = error;
    }
    if (!(refusal instanceof EngramError)) throw new Error('expected a refusal');
    expect(refusal.message).toContain('memory_write');
    expect(apiMessage(refusal)).toBe(READ_ONLY_TOKEN);
  });
});
