/**
 * The content every benchmark stores: the same subjects for Engram and for its peer,
 * generated deterministically so that runs compare like with like. A subject has a
 * name, a one-line description and a body of about 1 KiB in eight lines; its first
 * line carries a marker that occurs nowhere else, so a replace can target it.
 */

import type { FloorEntry } from './floor-memory.js';

const GROUPS = ['areas', 'people', 'topics'] as const;

const WORDS = (
  'build cache commit decoder encoder kernel layer model quantize release review sample schema server shader ' +
  'tensor token vector weight window audio batch buffer config context driver format graph index merge patch ' +
  'prompt render stream thread upload vulkan metal cuda rocm webui llama whisper bert qwen gemma mistral phi ' +
  'likes prefers avoids asked decided noted measured fixed broke reverted shipped planned tested profiled'
).split(' ');

/** A small seeded generator (mulberry32), so every run writes the same text. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function sentence(next: () => number, minLength: number): string {
  let text = '';
  while (text.length < minLength) text += `${text ? ' ' : ''}${WORDS[Math.floor(next() * WORDS.length)]}`;
  return text;
}

export interface Subject {
  readonly name: string;
  readonly description: string;
  /** The body's lines; the body is them joined by `\n`, with a final `\n`. */
  readonly lines: readonly string[];
}

export const BODY_LINES = 8;

/** A subject as a floor seeds it (floor-memory.ts): its index line's parts and its body. */
export function floorEntry(one: Subject): FloorEntry {
  const body = bodyOf(one);
  return { name: one.name, description: one.description, body, size: Buffer.byteLength(body) };
}

export function markerOf(index: number, revision: number): string {
  return `marker-${index}-r${revision}`;
}

/** The name of subject `index`, without building the rest of it (cheap enough to call inside a timed call). */
export function subjectName(index: number): string {
  return `${GROUPS[index % GROUPS.length]}/subject-${String(index).padStart(6, '0')}`;
}

export function subject(index: number): Subject {
  const next = random(index + 1);
  const name = subjectName(index);
  const description = `Subject ${index}: ${sentence(next, 48)}`;
  const lines = [`${markerOf(index, 0)} ${sentence(next, 100)}`];
  while (lines.length < BODY_LINES) lines.push(sentence(next, 120));
  return { name, description, lines };
}

export function bodyOf(subject: Subject): string {
  return `${subject.lines.join('\n')}\n`;
}

/** A line to append, unique per `serial` (the peer silently skips duplicate observations). */
export function appendedLine(serial: number): string {
  return `note ${serial}: ${sentence(random(1_000_000 + serial), 90)}`;
}

export function subjects(from: number, to: number): Subject[] {
  return Array.from({ length: to - from }, (_, offset) => subject(from + offset));
}

/** Engram's export document (docs/export-format.md) holding the subjects. */
export function exportDocument(list: readonly Subject[]) {
  return {
    format: 'engram-export' as const,
    version: 1 as const,
    entries: list.map((item) => ({ name: item.name, description: item.description, body: bodyOf(item) })),
  };
}

/**
 * The peer's JSONL file holding the same subjects: one entity per subject, its type the
 * group, its observations the description then the body's lines.
 */
export function peerGraphFile(list: readonly Subject[]): string {
  return list
    .map((item) =>
      JSON.stringify({
        type: 'entity',
        name: item.name,
        entityType: item.name.slice(0, item.name.indexOf('/')),
        observations: [item.description, ...item.lines],
      }),
    )
    .join('\n');
}
