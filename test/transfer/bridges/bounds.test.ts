/**
 * What every importer holds and how long it works stay bounded whatever its source
 * repeats or nests (issue #25): a plan lists at most LISTED_LEFT_OUT items of each problem
 * and counts the rest; a ChatGPT line given again is one item with its count; splitting
 * measures each line once; every JSON text is checked for nesting before it is parsed;
 * the patterns that read a line (links, headings, front-matter comments) take one pass;
 * a bridge run with pauses never holds the loop, whatever its line ends (`\r`), the
 * number of its lines (a MEMORY.md or a front matter of millions) or their length; and an
 * entity given again is counted, not kept. Counted as work and items, or as
 * event-loop pauses — never as wall time.
 */

import { setImmediate as nextTurn } from 'node:timers/promises';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { DEFAULT_POLICY, type Policy } from '../../../src/memory/model/policy.js';
import { parseChatgpt } from '../../../src/transfer/bridges/chatgpt.js';
import { parseClaudeCode } from '../../../src/transfer/bridges/claude-code.js';
import { firstHeadingOrLine } from '../../../src/transfer/bridges/first-line.js';
import { readFrontMatter } from '../../../src/transfer/bridges/front-matter.js';
import { BRIDGE_KINDS, BRIDGES } from '../../../src/transfer/bridges/index.js';
import { parseLlamaWebui } from '../../../src/transfer/bridges/llama-webui.js';
import { buildPlan, type Draft, LISTED_LEFT_OUT, splitBody } from '../../../src/transfer/bridges/plan.js';
import { parseServerMemory } from '../../../src/transfer/bridges/server-memory.js';
import { runWhole, runWithPauses } from '../../../src/transfer/bridges/steps.js';
import { HELD_LOOP_MS, withEventLoopDelay } from '../../helpers/event-loop.js';
import { withHeapPeak } from '../../helpers/heap.js';
import { files } from './fixtures.js';

/** Room for a test of many megabytes on a busy machine (its time is never what is asserted). */
const HEAVY_TEST_MS = 120_000;

afterEach(() => {
  vi.restoreAllMocks();
});

const refusal = (parse: () => unknown) => {
  try {
    parse();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('not refused');
};

describe('a plan of a source that repeats', () => {
  it(
    `lists ${LISTED_LEFT_OUT} duplicates and counts the rest, whatever their number`,
    () => {
      const same: Draft = { source: 'x', group: 'topics', slug: 'same', description: 'Same', body: 'same\n' };
      const drafts = Array.from({ length: 10_000 }, (_, i) => ({ ...same, source: `entry ${i + 1}` }));
      const plan = buildPlan('llama-webui', drafts, DEFAULT_POLICY);
      expect(plan.entries).toHaveLength(1);
      expect(plan.items).toHaveLength(1 + LISTED_LEFT_OUT);
      expect(plan.items[1]).toEqual({
        source: 'entry 2',
        names: [],
        notes: ['duplicate of entry 1: left out'],
        problem: 'duplicate',
      });
      expect(plan.unlisted).toEqual({ duplicate: 10_000 - 1 - LISTED_LEFT_OUT, 'too-large': 0, 'not-an-entry': 0 });
    },
    HEAVY_TEST_MS,
  );

  it(
    'refuses past the entry cap the names of groups the model cannot write too',
    () => {
      const drafts = Array.from({ length: 1_001 }, (_, i) => ({
        source: `entry ${i}`,
        group: 'archive',
        slug: `n${i}`,
        description: 'N',
        body: `${i}\n`,
      }));
      expect(refusal(() => buildPlan('llama-webui', drafts, DEFAULT_POLICY))).toMatch(
        /^the import would make 1,001 entries in this memory; the cap is 1,000\./,
      );
    },
    HEAVY_TEST_MS,
  );

  it(
    'refuses entries past the user cap as soon as they pass it, however they are named',
    () => {
      const drafts = Array.from({ length: 300 }, (_, i) => ({
        source: `entry ${i}`,
        group: 'topics',
        slug: `n${i}`,
        description: 'N',
        body: 'x'.repeat(15_000),
      }));
      expect(refusal(() => buildPlan('llama-webui', drafts, DEFAULT_POLICY))).toMatch(
        /^the entries of this source come to more than 4,194,304 bytes, all one memory may hold/,
      );
    },
    HEAVY_TEST_MS,
  );

  it(
    'quotes at most 80 characters of a name in its notes: a report never echoes a whole file',
    () => {
      const slug = 'Ü'.repeat(1_000_000);
      const plan = buildPlan(
        'x',
        [{ source: 's', group: 'topics', slug, description: 'd', body: 'b\n' }],
        DEFAULT_POLICY,
      );
      expect(JSON.stringify(plan.items).length).toBeLessThan(1_000);
    },
    HEAVY_TEST_MS,
  );

  it(
    'is one duplicate item for a ChatGPT line given a million times, with its count',
    () => {
      const plan = parseChatgpt(files({ 'm.txt': `First\n${'Again\n'.repeat(1_000_000)}` }), DEFAULT_POLICY);
      expect(plan.entries[0]?.body).toBe('First\nAgain\n');
      expect(plan.items.slice(1)).toEqual([
        {
          source: 'line 3',
          names: [],
          notes: ['the same memory as line 2, and 999,998 more lines after it: kept once'],
          problem: 'duplicate',
        },
      ]);
    },
    HEAVY_TEST_MS,
  );

  it(
    'refuses ChatGPT memories past the user cap as soon as they pass it',
    () => {
      const lines = Array.from({ length: 1_000_000 }, (_, i) => `memory ${i}`).join('\n');
      expect(refusal(() => parseChatgpt(files({ 'm.txt': lines }), DEFAULT_POLICY, { split: true }))).toMatch(
        /^the entries of this source come to more than 4,194,304 bytes, all one memory may hold .*Import a part of it at a time, or raise userCap in the configuration\.$/,
      );
    },
    HEAVY_TEST_MS,
  );
});

describe('splitBody', () => {
  it(
    'measures each line of a 1-million-line body once, not against the whole piece so far',
    () => {
      const body = Array.from({ length: 1_000_000 }, (_, i) => `m${i}\n`).join('');
      let measured = 0;
      const byteLength = Buffer.byteLength;
      vi.spyOn(Buffer, 'byteLength').mockImplementation((text, encoding) => {
        measured += typeof text === 'string' ? text.length : 0;
        return byteLength(text, encoding);
      });
      const pieces = runWhole(splitBody(body, DEFAULT_POLICY.entryCap));
      vi.restoreAllMocks();
      // Before: each line measured with the piece it joins, some 8,000 times the body's length.
      expect(measured).toBeLessThanOrEqual(body.length);
      expect(pieces.join('')).toBe(body);
      expect(pieces.every((piece) => Buffer.byteLength(piece) <= DEFAULT_POLICY.entryCap)).toBe(true);
    },
    HEAVY_TEST_MS,
  );

  it(
    'cuts a line over the cap between characters in one pass, keeping every character whole',
    () => {
      const body = `${'é🙂'.repeat(100_000)}\nend\n`;
      const pieces = runWhole(splitBody(body, 1_000));
      expect(pieces.join('')).toBe(body);
      expect(pieces.every((piece) => Buffer.byteLength(piece) <= 1_000 && !piece.endsWith('\uD83D'))).toBe(true);
    },
    HEAVY_TEST_MS,
  );
});

describe('every JSON a bridge parses is checked for nesting first', () => {
  const deep = '['.repeat(5_000_000);

  it(
    'refuses a memory.jsonl line nested past 64 levels before parsing it',
    () => {
      const { maxDelayMs, result } = {
        ...runTimed(() => refusal(() => parseServerMemory(files({ 'memory.jsonl': deep }), DEFAULT_POLICY))),
      };
      expect(result).toBe(
        'memory.jsonl line 1 is JSON nested more than 64 levels deep, which no memory.jsonl line is; nothing was imported.',
      );
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    },
    HEAVY_TEST_MS,
  );

  it(
    'refuses a llama.cpp WebUI export nested past 64 levels, parsed whole as by the CLI',
    () => {
      const { maxDelayMs, result } = runTimed(() =>
        refusal(() => parseLlamaWebui(files({ 'm.json': `{"entries":${deep}` }), DEFAULT_POLICY)),
      );
      expect(result).toBe(
        'm.json is JSON nested more than 64 levels deep, which no llama.cpp WebUI memory export is; nothing was imported.',
      );
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    },
    HEAVY_TEST_MS,
  );
});

/** Runs synchronous work, returning it with how long it held the thread (what a server's loop would wait). */
function runTimed<T>(work: () => T): { result: T; maxDelayMs: number } {
  const start = performance.now();
  const result = work();
  return { result, maxDelayMs: performance.now() - start };
}

describe('the patterns that read a line take one pass over it', () => {
  it(
    'reads a MEMORY.md line of a million [ or [](, and a link with a broken %-escape',
    () => {
      const index = `# Index\n${'['.repeat(1_000_000)}\n${'[]('.repeat(300_000)}\n- [Bad](100%.md)\n`;
      const { result, maxDelayMs } = runTimed(() => parseClaudeCode(files({ 'MEMORY.md': index }), DEFAULT_POLICY));
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
      expect(result.items.at(-1)).toEqual({
        source: '100%.md',
        names: [],
        notes: ['linked from MEMORY.md but not in the folder'],
        problem: 'not-an-entry',
      });
    },
    HEAVY_TEST_MS,
  );

  it(
    'reads a heading and a front-matter description with a long run of spaces',
    () => {
      const spaces = ' '.repeat(200_000);
      const { maxDelayMs } = runTimed(() => {
        expect(firstHeadingOrLine(`# Title${spaces}x\n`)).toBe(`Title${spaces}x`);
        expect(firstHeadingOrLine('# Title ##\n')).toBe('Title');
        expect(readFrontMatter(`---\ndescription: a${spaces}b\n---\nbody`)).toEqual({
          description: `a${spaces}b`,
          body: 'body',
        });
        expect(readFrontMatter('---\ndescription: a  # a comment\n---\n')).toEqual({ description: 'a', body: '' });
      });
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    },
    HEAVY_TEST_MS,
  );
});

describe('each bridge run with pauses', () => {
  const sources: Record<(typeof BRIDGE_KINDS)[number], Record<string, string>> = {
    markdown: Object.fromEntries(
      Array.from({ length: 900 }, (_, i) => [`topics/n${i}.md`, `${'line\n'.repeat(2_000)}`]),
    ),
    'server-memory': {
      'memory.jsonl': `${JSON.stringify({ type: 'entity', name: 'A', entityType: 't', observations: [] })}\n${`${JSON.stringify({ type: 'relation', from: 'Z', to: 'A', relationType: 'r' })}\n`.repeat(300_000)}`,
    },
    'anthropic-memory': Object.fromEntries(Array.from({ length: 900 }, (_, i) => [`n${i}.md`, 'line\n'.repeat(2_000)])),
    'claude-code': { 'MEMORY.md': `# Index\n${'- [a](a.md) note\n'.repeat(300_000)}` },
    // Half the memories given twice: 150,000 repeated memories to report, besides 150,000 to read.
    chatgpt: { 'm.txt': Array.from({ length: 300_000 }, (_, i) => `memory ${i % 150_000}`).join('\n') },
    'llama-webui': {
      'm.json': JSON.stringify({
        entries: Array.from({ length: 900 }, (_, i) => ({
          name: `topics/n${i}`,
          description: 'd',
          body: 'x\n'.repeat(2_000),
          updated: 1,
        })),
      }),
    },
  };

  it.each(BRIDGE_KINDS)(
    '%s pauses often enough that the loop is never held',
    async (kind) => {
      const policy = { ...DEFAULT_POLICY, userCap: 64 * 1024 * 1024 };
      const { maxDelayMs } = await runMeasured(kind, sources[kind], policy);
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
    },
    HEAVY_TEST_MS,
  );
});

/** Runs a bridge with pauses, measuring the heap it holds at its peak and the longest pause of the loop. */
async function runMeasured(kind: (typeof BRIDGE_KINDS)[number], source: Record<string, string>, policy: Policy) {
  const bridge = BRIDGES[kind];
  const pause = async () => {
    await nextTurn();
  };
  // As text, as a server hands it over, and made one flat string first (a search flattens it): neither decoding
  // bytes (a CLI's file) nor V8 joining a string built of pieces (a known, separate stall) is what is measured.
  const sourceFiles = Object.entries(source).map(([path, text]) => ({ path, text }));
  for (const { text } of sourceFiles) text.includes('\u0000');
  const { result, peakBytes } = await withHeapPeak(() =>
    withEventLoopDelay(() =>
      bridge.read
        ? bridge.read(sourceFiles, policy, { split: true }, pause)
        : runWithPauses(bridge.steps(sourceFiles, policy, { split: true }), pause),
    ),
  );
  return { plan: result.result, maxDelayMs: result.maxDelayMs, peakBytes };
}

describe('every bridge reads line by line, a step at a time, whatever its lines', () => {
  const roomy = { ...DEFAULT_POLICY, maxEntries: 5_000, userCap: 128 * 1024 * 1024 };

  it(
    'reads a ChatGPT paste with \\r line ends as many lines, never the whole paste in one step',
    async () => {
      // 2 million lines ending in \r alone. Before: one "line", split into 2 million strings and read in one step.
      const text = Array.from({ length: 2_000_000 }, (_, i) => `memory ${i % 100_000}\r`).join('');
      const { plan, maxDelayMs } = await runMeasured('chatgpt', { 'm.txt': text }, roomy);
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
      expect(plan.items[0]?.source).toBe('100000 memories');
      expect(plan.items[1]).toEqual({
        source: 'line 100001',
        names: [],
        notes: ['the same memory as line 1, and 18 more lines after it: kept once'],
        problem: 'duplicate',
      });
      expect(parseChatgpt(files({ 'm.txt': 'a\rb\r\nc\n\rd' }), DEFAULT_POLICY).entries[0]?.body).toBe('a\nb\nc\nd\n');
    },
    HEAVY_TEST_MS,
  );

  it(
    'steps by characters too: 4,000 memory.jsonl lines of 15 KB are not one step',
    async () => {
      const observation = 'o'.repeat(15 * 1024);
      const text = Array.from({ length: 4_000 }, (_, i) =>
        JSON.stringify({ type: 'entity', name: `e${i}`, entityType: 't', observations: [observation] }),
      ).join('\n');
      const { plan, maxDelayMs } = await runMeasured('server-memory', { 'memory.jsonl': text }, roomy);
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
      expect(plan.entries).toHaveLength(4_000);
    },
    HEAVY_TEST_MS,
  );

  it(
    'reads a MEMORY.md of 8 million lines without a heading a step at a time',
    async () => {
      const { plan, maxDelayMs } = await runMeasured('claude-code', { 'MEMORY.md': 'x\n'.repeat(8_000_000) }, roomy);
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
      expect(plan.entries[0]?.description).toBe('x (part 1 of 977)');
    },
    HEAVY_TEST_MS,
  );

  it(
    'reads a front matter of 4 million lines a step at a time',
    async () => {
      const text = `---\n${'k: v\n'.repeat(4_000_000)}type: project\ndescription: Long\n---\nbody\n`;
      const markdown = await runMeasured('markdown', { 'topics/a.md': text }, roomy);
      expect(markdown.maxDelayMs).toBeLessThan(HELD_LOOP_MS);
      expect(markdown.plan.entries).toEqual([{ name: 'topics/a', description: 'Long', body: 'body\n' }]);
      const claude = await runMeasured('claude-code', { 'MEMORY.md': '# M\n', 'a.md': text }, roomy);
      expect(claude.maxDelayMs).toBeLessThan(HELD_LOOP_MS);
      expect(claude.plan.entries[1]).toEqual({ name: 'areas/a', description: 'Long', body: 'body\n' });
    },
    HEAVY_TEST_MS,
  );

  it(
    'refuses a MEMORY.md past the user cap before reading its links (2.5 million to missing files)',
    async () => {
      const index = Array.from({ length: 2_500_000 }, (_, i) => `- [a${i}](a${i}.md)`).join('\n');
      // Before: every link kept until the folder was checked for it, some 260 MB, and the loop held 600 ms and more.
      const pause = async () => {
        await nextTurn();
      };
      const { result, peakBytes } = await withHeapPeak(() =>
        withEventLoopDelay(() =>
          runWithPauses(
            BRIDGES['claude-code'].steps([{ path: 'MEMORY.md', text: index }], DEFAULT_POLICY, {}),
            pause,
          ).then(
            () => 'not refused',
            (refused: Error) => refused.message,
          ),
        ),
      );
      const { result: error, maxDelayMs } = result;
      expect(error).toMatch(/^the entries of this source come to more than 4,194,304 bytes, all one memory may hold/);
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
      expect(peakBytes).toBeLessThan(32 * 1024 * 1024);
    },
    HEAVY_TEST_MS,
  );

  it(
    'counts a memory.jsonl entity given again 600,000 times, keeping one',
    async () => {
      const entity = JSON.stringify({ type: 'entity', name: 'Ada', entityType: 'person', observations: ['x'] });
      const other = JSON.stringify({ type: 'entity', name: 'Ada', entityType: 'person', observations: ['y'] });
      // 40 MB of text, held before the import: an entity for each line was some 200 MB more.
      const text = `${entity}\n${other}\n${`${entity}\n`.repeat(600_000)}`;
      const { plan, maxDelayMs, peakBytes } = await runMeasured('server-memory', { 'memory.jsonl': text }, roomy);
      expect(maxDelayMs).toBeLessThan(HELD_LOOP_MS);
      expect(peakBytes).toBeLessThan(32 * 1024 * 1024);
      expect(plan.entries.map((entry) => entry.name)).toEqual(['people/ada', 'people/ada-2']);
      expect(plan.items.slice(2)).toEqual([
        {
          source: 'line 3: entity "Ada" (person)',
          names: [],
          notes: ['the same entity as line 1, and 599,999 more lines after it: left out'],
          problem: 'duplicate',
        },
      ]);
      expect(plan.unlisted).toEqual({ duplicate: 0, 'too-large': 0, 'not-an-entry': 0 });
    },
    HEAVY_TEST_MS,
  );

  it(
    'refuses entities past the entry cap counting each copy that differs, however few names',
    () => {
      const text = Array.from({ length: 1_001 }, (_, i) =>
        JSON.stringify({ type: 'entity', name: 'Ada', entityType: 'person', observations: [`${i}`] }),
      ).join('\n');
      expect(refusal(() => parseServerMemory(files({ 'memory.jsonl': text }), DEFAULT_POLICY))).toMatch(
        /^the import would make 1,001 entries in this memory; the cap is 1,000\./,
      );
    },
    HEAVY_TEST_MS,
  );
});
