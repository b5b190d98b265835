/**
 * The peers of the stdio benchmark — the memory servers a user would pick instead of
 * Engram that run here without a cloud key — and how each one's tools map to Engram's
 * operations: create an entry, append a line to one, open one, list what is held. Each is
 * started on a folder of its own and seeded with the same subjects as Engram, in its own
 * format, by its own import where it has one.
 */

import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { appendedLine, bodyOf, peerGraphFile, type Subject, subject, subjectName } from './content.js';
import { type CallResult, connect, type Session, textOf } from './mcp-client.js';
import { installPeers, PEER_VERSIONS, peerFile } from './peer-install.js';

export type Operation = 'create' | 'append' | 'open' | 'index' | 'ping';

/** Each operation of one server, called with the number of its call. */
export type Operations = Readonly<Partial<Record<Operation, (call: number) => Promise<unknown>>>>;

export type PeerSide = 'memory' | 'keeper' | 'memorix';

export interface StartedPeer {
  readonly session: Session;
  readonly operations: Operations;
}

export interface Peer {
  readonly side: PeerSide;
  /** package@version. */
  readonly name: string;
  /** Its short name in the report's columns. */
  readonly label: string;
  /** The tool call each operation maps to, in words. */
  readonly tools: Readonly<Record<Exclude<Operation, 'ping'>, string>>;
  /** How it stores what it is given, for the report. */
  readonly storage: string;
  /** What its index call showed, from its last answer. */
  shown(index: CallResult, entries: number): string;
  /** Starts it on `folder` holding `list`, ready to be measured; `indexed` receives every index answer. */
  start(folder: string, list: readonly Subject[], indexed: (result: CallResult) => void): Promise<StartedPeer>;
}

/** The subject the call of an operation works on: a different one each call, the same for every server. */
export function pickSubject(entries: number, call: number, salt: number): Subject {
  return subject(pickIndex(entries, call, salt));
}

/** The name of pickSubject's subject, without building its body (~30 µs) inside the timed call. */
export function pickName(entries: number, call: number, salt: number): string {
  return subjectName(pickIndex(entries, call, salt));
}

const pickIndex = (entries: number, call: number, salt: number) => (call * 7919 + salt * 104_729) % entries;

/**
 * The subjects one server's creates make, one after another: past the seeded ones, new on
 * every call of the run (whichever series it is in), the same sequence for every server.
 */
export function creations(entries: number): () => Subject {
  let next = 0;
  return () => subject(entries + next++);
}

let serial = 0;

/** A new line to append, distinct from every other (the official memory server silently skips duplicates). */
export function nextLine(): string {
  return appendedLine(serial++);
}

/** A number as the report writes it: 5,000. */
const count = (n: number) => n.toLocaleString('en-US');

/** The environment of a SQLite peer: its own home, nothing of the caller's (no API key reaches it). */
function isolatedEnv(home: string, extra: Record<string, string>): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: home, ...extra };
}

/** Fails loudly when a write was not done, so that no figure measures a refusal. */
function expect(result: CallResult, pattern: RegExp, what: string): CallResult {
  const text = textOf(result);
  if (!pattern.test(text)) throw new Error(`${what}: unexpected answer ${JSON.stringify(text.slice(0, 300))}`);
  return result;
}

async function installed(): Promise<string> {
  const install = await installPeers();
  if (!install.ok) throw new Error(install.reason);
  return install.folder;
}

const MEMORY_MANIFEST = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-memory/package.json');

export const MEMORY_SCRIPT = join(dirname(MEMORY_MANIFEST), 'dist', 'index.js');

export const MEMORY_VERSION = (JSON.parse(readFileSync(MEMORY_MANIFEST, 'utf8')) as { version: string }).version;

/** The official MCP memory server: a JSONL knowledge graph, one entity per subject. */
const memory: Peer = {
  side: 'memory',
  label: 'server-memory',
  name: `@modelcontextprotocol/server-memory@${MEMORY_VERSION}`,
  tools: {
    create: 'create_entities([one entity, its 9 observations])',
    append: 'add_observations([one line])',
    open: 'open_nodes([one name])',
    index: 'read_graph',
  },
  storage: 'a JSONL file, read whole and parsed on every call, rewritten whole on every write, never fsynced',
  shown: (_index, entries) => `all ${count(entries)} entities with every observation`,
  async start(folder, list, indexed) {
    const graphFile = join(folder, 'memory.jsonl');
    writeFileSync(graphFile, peerGraphFile(list));
    const session = await connect(process.execPath, [MEMORY_SCRIPT], { ...process.env, MEMORY_FILE_PATH: graphFile });
    const entries = list.length;
    const created = creations(entries);
    return {
      session,
      operations: {
        create: () => {
          const item = created();
          return session.call('create_entities', {
            entities: [
              {
                name: item.name,
                entityType: item.name.slice(0, item.name.indexOf('/')),
                observations: [item.description, ...item.lines],
              },
            ],
          });
        },
        append: (call) =>
          session.call('add_observations', {
            observations: [{ entityName: pickName(entries, call, 1), contents: [nextLine()] }],
          }),
        open: (call) => session.call('open_nodes', { names: [pickName(entries, call, 2)] }),
        index: () => session.call('read_graph', {}).then(indexed),
        ping: () => session.ping(),
      },
    };
  },
};

/**
 * mcp-memory-keeper: key/value context items in SQLite, within sessions. It has no append:
 * an item is replaced whole by `context_save` of the same key, as a model adding a line
 * would do, sending the whole value again.
 */
const keeper: Peer = {
  side: 'keeper',
  label: 'memory-keeper',
  name: `mcp-memory-keeper@${PEER_VERSIONS['mcp-memory-keeper']}`,
  tools: {
    create: 'context_save(new key, description and body)',
    append: 'context_save(same key, the whole value and one more line)',
    open: 'context_get(key)',
    index: 'context_get() (its first page)',
  },
  storage:
    'SQLite through better-sqlite3 in WAL mode, no fsync on commit (seen with strace), so a write survives a crash ' +
    'of the process but not of the machine; each save upserts the item, then stores a hashed n-gram vector of it ' +
    'computed in process, in a second commit',
  shown(index, entries) {
    const { pagination } = JSON.parse(textOf(index)) as { pagination: { returned: number; total: number } };
    return `the first ${count(pagination.returned)} of ${count(pagination.total)} items (of ${count(entries)} seeded), whole values`;
  },
  async start(folder, list, indexed) {
    const root = await installed();
    const home = join(folder, 'keeper');
    mkdirSync(join(home, 'exports'), { recursive: true });
    const itemValue = (item: Subject) => `${item.description}\n${bodyOf(item)}`;
    // Its own import (one transaction) from its export format, into the session it works in.
    writeFileSync(
      join(home, 'exports', 'seed.json'),
      JSON.stringify({
        session: { name: 'bench' },
        contextItems: list.map((item) => ({ key: item.name, value: itemValue(item), category: 'note' })),
      }),
    );
    const session = await connect(
      process.execPath,
      [peerFile(root, 'mcp-memory-keeper', 'dist', 'index.js')],
      isolatedEnv(home, { DATA_DIR: home }),
      home,
    );
    try {
      expect(
        await session.call('context_import', { filePath: 'seed.json', merge: true }),
        new RegExp(`Context items: ${list.length}\\b`),
        'mcp-memory-keeper import',
      );
    } catch (error) {
      await session.close();
      throw error;
    }
    const entries = list.length;
    const created = creations(entries);
    const values = new Map<string, string>();
    const save = (key: string, value: string) =>
      session
        .call('context_save', { key, value, category: 'note' })
        .then((result) => expect(result, /^Saved: /, 'mcp-memory-keeper context_save'));
    return {
      session,
      operations: {
        create: () => {
          const item = created();
          return save(item.name, itemValue(item));
        },
        append: (call) => {
          const item = pickSubject(entries, call, 1);
          const value = `${values.get(item.name) ?? itemValue(item)}${nextLine()}\n`;
          values.set(item.name, value);
          return save(item.name, value);
        },
        open: (call) => session.call('context_get', { key: pickName(entries, call, 2) }),
        index: () => session.call('context_get', {}).then(indexed),
        ping: () => session.ping(),
      },
    };
  },
};

/** The word every seeded description holds ("Subject 12: …"), which memorix's index is asked for. */
const EVERY_ENTRY = 'subject';

/**
 * memorix: observations in SQLite, searched through an in-memory full-text index. An entry
 * is an observation with a `topicKey` (its name), which `memorix_store` updates in place:
 * the closest to Engram's named entries. With a topicKey its "formation" step (a search for
 * similar memories, deciding to store, merge or discard) is skipped.
 */
const memorix: Peer = {
  side: 'memorix',
  label: 'memorix',
  name: `memorix@${PEER_VERSIONS.memorix}`,
  tools: {
    create: 'memorix_store(topicKey = name, title, narrative)',
    append: 'memorix_store(same topicKey, the whole narrative and one more line)',
    open: 'memorix_detail([one id])',
    index: `memorix_search("${EVERY_ENTRY}") (its "compact index")`,
  },
  storage:
    'SQLite through better-sqlite3 in WAL mode, no fsync on commit (seen with strace), and a BM25 full-text index ' +
    'in memory, built from SQLite when it starts; given a topicKey, a store updates that observation in place and ' +
    'skips memorix’s formation step (a search for similar memories that may merge the new one into another or ' +
    'discard it); run without its optional embedding packages, which download a model, and with its auto-update off',
  shown(index, entries) {
    const found = /Found (\d+) observation/.exec(textOf(index))?.[1];
    return `the ${found ?? '?'} best matches (of ${count(entries)} seeded), one line each`;
  },
  async start(folder, list, indexed) {
    const root = await installed();
    const home = join(folder, 'memorix');
    mkdirSync(home, { recursive: true });
    // It binds its memory to the git project it is started in, and refuses to start outside one.
    execFileSync('git', ['init', '--quiet', home]);
    const open = () =>
      connect(
        process.execPath,
        [peerFile(root, 'memorix', 'dist', 'cli', 'index.js'), 'serve'],
        // No auto-update: it would `npm install -g` a newer memorix in the background.
        isolatedEnv(home, { MEMORIX_AUTO_UPDATE: 'off' }),
        home,
      );
    const exported = async (session: Session) => {
      const text = textOf(await session.call('memorix_transfer', { action: 'export', format: 'json' }));
      const json = text.split('```json')[1]?.split('```')[0];
      if (json === undefined)
        throw new Error(`memorix export: unexpected answer ${JSON.stringify(text.slice(0, 300))}`);
      return JSON.parse(json) as {
        projectId: string;
        observations: { id: number; topicKey?: string }[];
      };
    };
    // Seeded by its own import (its export format), then restarted: its search index is built when it starts.
    const ids = new Map<string, number>();
    const seeding = await open();
    try {
      const { projectId } = await exported(seeding);
      const now = new Date().toISOString();
      const observations = list.map((item, index) => ({
        id: index + 1,
        entityName: item.name,
        type: 'how-it-works',
        title: item.description,
        narrative: bodyOf(item),
        facts: [],
        filesModified: [],
        concepts: [],
        topicKey: item.name,
        createdAt: now,
        projectId,
      }));
      expect(
        await seeding.call('memorix_transfer', {
          action: 'import',
          data: JSON.stringify({ version: '0.9.0', exportedAt: now, projectId, observations, sessions: [] }),
        }),
        new RegExp(`Import complete — ${list.length} observations`),
        'memorix import',
      );
      for (const observation of (await exported(seeding)).observations) {
        if (observation.topicKey) ids.set(observation.topicKey, observation.id);
      }
    } finally {
      await seeding.close();
    }
    const session = await open();
    const entries = list.length;
    const created = creations(entries);
    const narratives = new Map<string, string>();
    const store = (item: Subject, narrative: string, done: RegExp) =>
      session
        .call('memorix_store', {
          entityName: item.name,
          type: 'how-it-works',
          title: item.description,
          narrative,
          topicKey: item.name,
        })
        .then((result) => expect(result, done, 'memorix_store'));
    const idOf = (name: string) => {
      const id = ids.get(name);
      if (id === undefined) throw new Error(`memorix: no observation for ${name} after the import`);
      return id;
    };
    return {
      session,
      operations: {
        create: () => {
          const item = created();
          return store(item, bodyOf(item), /Stored observation/);
        },
        append: (call) => {
          const item = pickSubject(entries, call, 1);
          const narrative = `${narratives.get(item.name) ?? bodyOf(item)}${nextLine()}\n`;
          narratives.set(item.name, narrative);
          return store(item, narrative, /Updated observation/);
        },
        open: (call) => session.call('memorix_detail', { ids: [idOf(pickName(entries, call, 2))] }),
        index: () => session.call('memorix_search', { query: EVERY_ENTRY }).then(indexed),
        ping: () => session.ping(),
      },
    };
  },
};

/** Every peer, in the order of the report's columns. */
export const PEERS: readonly Peer[] = [memory, keeper, memorix];
