/**
 * Invariant of the stdio fast path (docs/accelerators.md; switch ENGRAM_ACCEL_STDIO_FAST_PATH):
 * a line is answered byte for byte as the installed SDK answers it, with the same effects
 * and in the same order, or left to the SDK untouched.
 *
 * The fast path of MCP over stdio answers exactly what the SDK answers: two twin
 * servers, one with the fast path and one without, read the same lines and must write
 * the same lines back, byte for byte, for every hot request (every tool, its errors,
 * unknown tools, ping, tools/list) after a 2025 `initialize` of every version the SDK
 * speaks, and for everything the fast path leaves to the SDK: requests before
 * `initialize`, a 2026 connection, resources and prompts, requests with `_meta`. The
 * fast twin must have answered the hot requests itself; history must record the same
 * actors; a cancelled request is answered by neither; a read behind a write, with a
 * request for the SDK between them, sees the write.
 */

import { PassThrough } from 'node:stream';
import {
  CLIENT_CAPABILITIES_META_KEY,
  CLIENT_INFO_META_KEY,
  PROTOCOL_VERSION_META_KEY,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { describe, expect, it } from 'vitest';
import { parseMessage } from '../../src/mcp/json-rpc-decode.js';
import { LineQueue } from '../../src/mcp/line-queue.js';
import { createMcpServerFactory, type McpServerOptions } from '../../src/mcp/server.js';
import { createStdioFastPath, QUIET_BEFORE_PROOF_MS, type StdioFastPath } from '../../src/mcp/stdio-fast-path.js';
import { proveStdioAnswers } from '../../src/mcp/stdio-sdk.js';
import { StdioLineTransport } from '../../src/mcp/stdio-transport.js';
import { createMemory } from '../../src/memory/memory.js';
import { actorLabel } from '../../src/memory/model/caller.js';
import { DEFAULT_POLICY } from '../../src/memory/model/policy.js';
import { createToolHandler } from '../../src/memory/tools/handler.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';

/** One server on in-memory pipes; `fast` says whether it has the fast path. */
class Twin {
  readonly store = openMemoryStore();
  /** How many messages the fast path answered itself. */
  answeredFast = 0;
  /** Whether the fast path proved itself against the SDK (false without one), once the connection was quiet. */
  readonly proved: Promise<boolean>;
  /** Whether the proof was asked for yet. */
  proofAsked = false;
  private readonly stdin = new PassThrough();
  private readonly stdout = new PassThrough();
  private readonly answers = new LineQueue(this.stdout);
  private readonly handle: ReturnType<typeof serveStdio>;

  constructor(fast: boolean) {
    const memory = createMemory({ store: this.store });
    const options: McpServerOptions = {
      handler: createToolHandler(memory),
      memory,
      policy: DEFAULT_POLICY,
      version: '0.0.0-test',
      caller: (clientName) => ({ user: 'local', label: actorLabel(clientName, 'mcp') }),
    };
    let fastPath: StdioFastPath | undefined;
    let proved: (outcome: Promise<boolean>) => void = () => {};
    this.proved = fast ? new Promise((resolve) => (proved = resolve)) : Promise.resolve(false);
    if (fast) {
      const inner = createStdioFastPath({
        ...options,
        caller: (name) => options.caller(name, undefined),
        prove: () => {
          this.proofAsked = true;
          const outcome = proveStdioAnswers(options);
          proved(outcome);
          return outcome;
        },
      });
      fastPath = {
        take: (json, write) => {
          const taken = inner.take(json, write);
          if (taken) this.answeredFast++;
          return taken;
        },
        given: (message) => inner.given(message),
        sent: (message) => inner.sent(message),
      };
    }
    this.handle = serveStdio(createMcpServerFactory(options), {
      transport: new StdioLineTransport(this.stdin, this.stdout, () => {}, parseMessage, { fastPath }),
    });
  }

  write(...messages: string[]): void {
    this.stdin.write(messages.map((message) => `${message}\n`).join(''));
  }

  /** The next line the server writes. */
  next(): Promise<string> {
    return this.answers.next();
  }

  close(): Promise<void> {
    return this.handle.close();
  }
}

function rpc(method: string, params?: unknown, id: number | string = 1): string {
  return JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });
}

const notification = (method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) });

const call = (name: string, args?: Record<string, unknown>, id: number | string = 1) =>
  rpc('tools/call', args === undefined ? { name } : { name, arguments: args }, id);

const initialize = (protocolVersion: string, id: number | string = 0) =>
  rpc('initialize', { protocolVersion, capabilities: {}, clientInfo: { name: 'Twin Client', version: '1' } }, id);

/** The hot requests: every tool, its refusals, an unknown tool, ping and tools/list; each depends on those before. */
const HOT: readonly string[] = [
  rpc('ping', undefined, 1),
  rpc('ping', {}, 'ping-2'),
  rpc('tools/list', undefined, 2),
  rpc('tools/list', {}, 'list-2'),
  call('memory_open', {}, 3),
  call('memory_write', { name: 'people/allozaur', description: 'WebUI maintainer', new: 'Met at FOSDEM.' }, 4),
  call('memory_write', { name: 'people/allozaur', new: 'Likes "Svelte" — ünïcode.\n' }, 'write-2'),
  call('memory_write', { name: 'people/allozaur', old: 'Met at FOSDEM.', new: 'Met at FOSDEM 2026.' }, 'write-3'),
  call('memory_write', { name: 'people/allozaur', old: 'not there', new: 'x' }, 'write-4'),
  call('memory_open', { names: ['people/allozaur'] }, 5),
  call('memory_open', undefined, 6),
  call('memory_open', { names: ['people/nobody'] }, 7),
  call('memory_open', { names: 5 }, 8),
  call('memory_write', { name: 'Not A Name', new: 'x' }, 9),
  call('memory_forget', { name: 'people/allozaur' }, 10),
  call('memory_drop', { name: 'people/nobody' }, 11),
  call('memory_drop', { name: 'people/allozaur' }, -12),
  call('memory_open', {}, 13),
];

/** Requests the fast path leaves to the SDK, between hot ones. */
const FOR_THE_SDK: readonly string[] = [
  rpc('resources/list', undefined, 'r1'),
  rpc('prompts/list', undefined, 'p1'),
  rpc('tools/call', { name: 'memory_open', arguments: {}, _meta: { progressToken: 7 } }, 'meta-1'),
  rpc('tools/list', { cursor: 'next' }, 'cursor-1'),
  rpc('nonsense/method', undefined, 'n1'),
];

/**
 * Lines near the hot shapes that are not JSON-RPC: the fast path, offered them before the
 * SDK's parsing, must leave them to be refused as before.
 */
const NOT_JSON_RPC: readonly string[] = [
  '{"jsonrpc":"2.0","id":20,"method":"ping","params":[]}',
  '{"jsonrpc":"1.0","id":21,"method":"ping"}',
  '{"jsonrpc":"2.0","id":2.5,"method":"ping"}',
  '{"jsonrpc":"2.0","id":null,"method":"tools/list"}',
  '{"jsonrpc":"2.0","id":23,"method":"tools/call","params":"memory_open"}',
  '{"jsonrpc":"2.0","id":24,"method":5}',
];

/** Sends each message to both twins, one at a time, and expects the same line back from each. */
async function expectSameAnswers(fast: Twin, sdk: Twin, messages: readonly string[]): Promise<string[]> {
  const answers: string[] = [];
  for (const message of messages) {
    fast.write(message);
    sdk.write(message);
    const [viaFast, viaSdk] = await Promise.all([fast.next(), sdk.next()]);
    expect(viaFast).toBe(viaSdk);
    answers.push(viaFast);
  }
  return answers;
}

/** A fast twin (its fast path proves itself against the installed SDK once armed and quiet), and an SDK-only twin. */
function twins(): [Twin, Twin] {
  return [new Twin(true), new Twin(false)];
}

const quietFor = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const actors = async (twin: Twin) =>
  (await twin.store.history('local', 'people/allozaur')).map((revision) => revision.actor);

describe('the stdio fast path answers as the SDK does', () => {
  it.each(SUPPORTED_PROTOCOL_VERSIONS)('after initialize with protocol version %s', async (version) => {
    const [fast, sdk] = twins();
    try {
      await expectSameAnswers(fast, sdk, [initialize(version)]);
      fast.write(notification('notifications/initialized'));
      sdk.write(notification('notifications/initialized'));
      expect(await fast.proved).toBe(true);
      const answers = await expectSameAnswers(fast, sdk, HOT);
      expect(fast.answeredFast).toBe(HOT.length);
      expect(sdk.answeredFast).toBe(0);
      await expectSameAnswers(fast, sdk, FOR_THE_SDK);
      expect(fast.answeredFast).toBe(HOT.length);
      const refusals = await expectSameAnswers(fast, sdk, NOT_JSON_RPC);
      expect(fast.answeredFast).toBe(HOT.length);
      for (const refusal of refusals) expect(JSON.parse(refusal)).toMatchObject({ id: null, error: { code: -32600 } });

      // The script reached every kind of answer.
      expect(answers[0]).toBe('{"result":{},"jsonrpc":"2.0","id":1}');
      expect(JSON.parse(answers[2]!).result.tools.map((tool: { name: string }) => tool.name)).toEqual([
        'memory_open',
        'memory_write',
        'memory_drop',
      ]);
      expect(answers[9]).toContain('Met at FOSDEM 2026.');
      expect(answers[8]).toContain('"isError":true');
      expect(answers[12]).toContain('"isError":true');
      expect(JSON.parse(answers[14]!).error.code).toBe(-32602);
      expect(await actors(fast)).toEqual(['Twin Client', 'Twin Client', 'Twin Client', 'Twin Client']);
      expect(await actors(sdk)).toEqual(await actors(fast));
    } finally {
      await fast.close();
      await sdk.close();
    }
  });

  it('proves itself only once the opening exchange is over, the SDK answering until then', async () => {
    const [fast, sdk] = twins();
    try {
      await expectSameAnswers(fast, sdk, [initialize('2025-06-18')]);
      fast.write(notification('notifications/initialized'));
      sdk.write(notification('notifications/initialized'));
      // A client's first requests, each right after the answer before it: the proof is not asked meanwhile.
      await expectSameAnswers(fast, sdk, [HOT[2]!, HOT[0]!, HOT[4]!]);
      expect(fast.proofAsked).toBe(false);
      expect(fast.answeredFast).toBe(0);
      expect(await fast.proved).toBe(true);
      await expectSameAnswers(fast, sdk, [HOT[2]!, HOT[4]!]);
      expect(fast.answeredFast).toBe(2);
    } finally {
      await fast.close();
      await sdk.close();
    }
  });

  it('leaves requests before initialize to the SDK', async () => {
    const [fast, sdk] = twins();
    try {
      await expectSameAnswers(fast, sdk, [HOT[4]!, HOT[5]!, HOT[0]!, initialize('2025-06-18')]);
      await quietFor(QUIET_BEFORE_PROOF_MS * 2);
      await expectSameAnswers(fast, sdk, [HOT[9]!]);
      expect(fast.answeredFast).toBe(0);
      expect(fast.proofAsked).toBe(false);
    } finally {
      await fast.close();
      await sdk.close();
    }
  });

  it('leaves a 2026 connection to the SDK', async () => {
    const [fast, sdk] = twins();
    const envelope = {
      [PROTOCOL_VERSION_META_KEY]: '2026-07-28',
      [CLIENT_INFO_META_KEY]: { name: 'Modern Client', version: '1' },
      [CLIENT_CAPABILITIES_META_KEY]: {},
    };
    const modern = (method: string, params: Record<string, unknown>, id: number) =>
      rpc(method, { ...params, _meta: envelope }, id);
    try {
      const answers = await expectSameAnswers(fast, sdk, [
        modern(
          'tools/call',
          { name: 'memory_write', arguments: { name: 'topics/tea', description: 'Tea', new: 'Green.' } },
          1,
        ),
        modern('tools/call', { name: 'memory_open', arguments: { names: ['topics/tea'] } }, 2),
        HOT[0]!,
        HOT[4]!,
        initialize('2025-06-18', 3),
        HOT[4]!,
      ]);
      expect(answers[1]).toContain('Green.');
      expect(fast.answeredFast).toBe(0);
    } finally {
      await fast.close();
      await sdk.close();
    }
  });

  it('stops at a second initialize, and answers a cancelled request with nothing, as the SDK does', async () => {
    const [fast, sdk] = twins();
    try {
      await expectSameAnswers(fast, sdk, [initialize('2025-11-25')]);
      expect(await fast.proved).toBe(true);
      await expectSameAnswers(fast, sdk, [HOT[0]!]);
      expect(fast.answeredFast).toBe(1);
      for (const twin of [fast, sdk]) {
        twin.write(
          call('memory_write', { name: 'people/allozaur', description: 'x', new: 'cancelled' }, 'c1'),
          notification('notifications/cancelled', { requestId: 'c1' }),
        );
      }
      // Neither answers c1: the next line each writes is the answer to this ping.
      await expectSameAnswers(fast, sdk, [rpc('ping', undefined, 'after-cancel')]);
      expect(fast.answeredFast).toBe(3);
      await expectSameAnswers(fast, sdk, [initialize('2025-11-25', 'again'), HOT[4]!]);
      expect(fast.answeredFast).toBe(3);
    } finally {
      await fast.close();
      await sdk.close();
    }
  });

  it('enters the tool handler in arrival order when a request for the SDK sits between two hot ones', async () => {
    const fast = new Twin(true);
    try {
      fast.write(initialize('2025-06-18'));
      await fast.next();
      expect(await fast.proved).toBe(true);
      fast.write(
        call('memory_write', { name: 'topics/order', description: 'Order', new: 'first' }, 1),
        rpc('resources/read', { uri: 'memory://entry/topics%2Forder' }, 2),
        call('memory_write', { name: 'topics/order', new: 'second' }, 3),
        call('memory_open', { names: ['topics/order'] }, 4),
      );
      const answers = new Map<unknown, string>();
      for (let count = 0; count < 4; count++) {
        const line = await fast.next();
        answers.set(JSON.parse(line).id, line);
      }
      expect(answers.get(2)).toContain('first');
      expect(answers.get(2)).not.toContain('second');
      expect(answers.get(4)).toContain('first\\nsecond');
      expect(fast.answeredFast).toBe(1);
    } finally {
      await fast.close();
    }
  });
});
