/**
 * Invariant of the stdio opening (src/mcp/stdio-opening.ts; on with the stdio fast path,
 * ENGRAM_ACCEL_STDIO_FAST_PATH): what it answers before the MCP SDK is loaded is byte for
 * byte what the SDK answers — for every 2025-era protocol version, the handshakes real
 * clients send, and handshakes fuzzed around the shapes it takes — and whatever it does
 * not take, the SDK answers once loaded, in order, after the opening has been replayed
 * into it; input that ends meanwhile is still served.
 */

import { PassThrough } from 'node:stream';
import { ProtocolErrorCode, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { parseMessage } from '../../src/mcp/json-rpc-decode.js';
import { JSON_RPC_ERROR, type ParseMessage } from '../../src/mcp/json-rpc-text.js';
import { LineQueue } from '../../src/mcp/line-queue.js';
import { createMcpServerFactory, type McpServerOptions } from '../../src/mcp/server.js';
import { serveMcpStdio } from '../../src/mcp/stdio.js';
import { createStdioOpening, OPENING_PROTOCOL_VERSIONS } from '../../src/mcp/stdio-opening.js';
import { QUIET_BEFORE_SDK_MS, StdioLineTransport } from '../../src/mcp/stdio-transport.js';
import { createMemory } from '../../src/memory/memory.js';
import { actorLabel } from '../../src/memory/model/caller.js';
import { DEFAULT_POLICY } from '../../src/memory/model/policy.js';
import { createToolHandler } from '../../src/memory/tools/handler.js';
import { openMemoryStore } from '../../src/storage/memory/index.js';

const VERSION = '0.0.0-test';

function serverOptions(): McpServerOptions & { readonly store: ReturnType<typeof openMemoryStore> } {
  const store = openMemoryStore();
  const memory = createMemory({ store });
  return {
    store,
    handler: createToolHandler(memory),
    memory,
    policy: DEFAULT_POLICY,
    version: VERSION,
    caller: (clientName) => ({ user: 'local', label: actorLabel(clientName, 'mcp') }),
  };
}

/** The SDK alone, as `engram stdio` serves it with the fast path off. */
function sdkOnly() {
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const lines = new LineQueue(stdout);
  const handle = serveStdio(createMcpServerFactory(serverOptions()), {
    transport: new StdioLineTransport(stdin, stdout, () => {}, parseMessage),
  });
  const send = (message: unknown) => stdin.write(`${JSON.stringify(message)}\n`);
  return {
    send,
    ask: (message: unknown) => {
      send(message);
      return lines.next();
    },
    close: () => handle.close(),
  };
}

const rpc = (method: string, params?: unknown, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  method,
  ...(params === undefined ? {} : { params }),
});

const INITIALIZED = { jsonrpc: '2.0', method: 'notifications/initialized' };

/** Handshakes as real clients send them. */
const HANDSHAKES: Readonly<Record<string, { capabilities: unknown; clientInfo: unknown }>> = {
  'Claude Desktop': { capabilities: {}, clientInfo: { name: 'claude-ai', version: '0.1.0' } },
  'Claude Code': {
    capabilities: { roots: {}, elicitation: {} },
    clientInfo: { name: 'claude-code', version: '2.1.0' },
  },
  'the Python SDK': {
    capabilities: { sampling: {}, elicitation: { form: {}, url: {} }, roots: { listChanged: true } },
    clientInfo: { name: 'mcp', version: '0.1.0' },
  },
  'a client with a title and website': {
    capabilities: { experimental: { 'x-trace': { on: true } }, sampling: { tools: {} } },
    clientInfo: { name: 'agent', title: 'My Agent', version: '1', websiteUrl: 'https://example.org', description: 'd' },
  },
};

/** What the opening writes for each message, or undefined where it did not take it. */
function openingAnswers(messages: readonly unknown[]): (string | undefined)[] {
  const opening = createStdioOpening({ policy: DEFAULT_POLICY, version: VERSION });
  return messages.map((message) => {
    let written: string | undefined;
    const taken = opening.take(message, (line) => {
      written = line;
    });
    return taken ? (written?.slice(0, -1) ?? '') : undefined;
  });
}

describe('the stdio opening answers as the SDK does', () => {
  it('uses the SDK’s error codes and 2025-era protocol versions', () => {
    for (const [name, code] of Object.entries(JSON_RPC_ERROR)) {
      expect(code).toBe(ProtocolErrorCode[name as keyof typeof JSON_RPC_ERROR]);
    }
    expect(OPENING_PROTOCOL_VERSIONS).toEqual(SUPPORTED_PROTOCOL_VERSIONS.filter((version) => version < '2026'));
  });

  describe.each(Object.entries(HANDSHAKES))('for %s', (_client, handshake) => {
    it.each(OPENING_PROTOCOL_VERSIONS)(
      'at protocol version %s: initialize, initialized, tools/list, ping',
      async (version) => {
        const messages = [
          rpc('initialize', { protocolVersion: version, ...handshake }, 0),
          INITIALIZED,
          rpc('tools/list', undefined, 'list'),
          rpc('ping', {}, 7),
        ];
        const ours = openingAnswers(messages);
        const sdk = sdkOnly();
        try {
          expect(ours[0]).toBe(await sdk.ask(messages[0]));
          expect(ours[1]).toBe('');
          sdk.send(messages[1]);
          expect(ours[2]).toBe(await sdk.ask(messages[2]));
          expect(ours[3]).toBe(await sdk.ask(messages[3]));
        } finally {
          await sdk.close();
        }
      },
    );
  });

  it('takes only handshakes the SDK answers the same, fuzzed around the shapes it takes', async () => {
    // Mostly the shapes the opening takes, each part now and then replaced by any JSON.
    const json = fc.jsonValue({ maxDepth: 2 });
    const often = <T>(arbitrary: fc.Arbitrary<T>) =>
      fc.oneof({ weight: 15, arbitrary }, { weight: 1, arbitrary: json });
    // A member now and then: absent (undefined, dropped by the JSON round trip below) nine times in ten.
    const rarely = fc.oneof({ weight: 9, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: json });
    const objectOf = (keys: readonly string[]) =>
      fc.dictionary(
        fc.oneof({ weight: 15, arbitrary: fc.constantFrom(...keys) }, { weight: 1, arbitrary: fc.string() }),
        often(fc.dictionary(fc.string(), json, { maxKeys: 2 })),
        { maxKeys: 3 },
      );
    const capabilities = often(
      fc.record(
        {
          roots: often(fc.record({ listChanged: often(fc.boolean()) }, { requiredKeys: [] })),
          sampling: often(objectOf(['context', 'tools'])),
          elicitation: often(
            fc.record(
              {
                form: often(fc.record({ applyDefaults: often(fc.boolean()) }, { requiredKeys: [] })),
                url: often(fc.constant({})),
              },
              { requiredKeys: [] },
            ),
          ),
          experimental: often(objectOf(['x-a', 'x-b'])),
          extensions: often(objectOf(['io.example/ext'])),
          tasks: rarely,
          other: rarely,
        },
        { requiredKeys: [] },
      ),
    );
    const clientInfo = often(
      fc.record(
        {
          name: often(fc.string()),
          version: often(fc.string()),
          title: often(fc.string()),
          websiteUrl: often(fc.string()),
          icons: rarely,
        },
        { requiredKeys: ['name', 'version'] },
      ),
    );
    const initialize = fc.record(
      {
        jsonrpc: fc.oneof({ weight: 9, arbitrary: fc.constant('2.0') }, { weight: 1, arbitrary: json }),
        id: fc.oneof(
          { weight: 4, arbitrary: fc.integer() },
          { weight: 4, arbitrary: fc.string() },
          { weight: 1, arbitrary: json },
        ),
        method: fc.constant('initialize'),
        params: often(
          fc.record(
            {
              protocolVersion: often(fc.constantFrom(...SUPPORTED_PROTOCOL_VERSIONS, '2026-07-28', '1999-01-01')),
              capabilities,
              clientInfo,
              _meta: rarely,
            },
            { requiredKeys: ['protocolVersion', 'capabilities', 'clientInfo'] },
          ),
        ),
      },
      { requiredKeys: ['jsonrpc', 'id', 'method', 'params'] },
    );
    let taken = 0;
    await fc.assert(
      fc.asyncProperty(initialize, async (generated) => {
        // What a client can send: JSON.
        const message: unknown = JSON.parse(JSON.stringify(generated));
        const [ours] = openingAnswers([message]);
        if (ours === undefined) return;
        taken++;
        const sdk = sdkOnly();
        try {
          expect(ours).toBe(await sdk.ask(message));
        } finally {
          await sdk.close();
        }
      }),
      { numRuns: 1000 },
    );
    // The property says something only if the opening took some of them.
    expect(taken).toBeGreaterThan(30);
  });

  it('leaves to the SDK a first message that is not a plain initialize, and everything after one not taken', () => {
    const plain = rpc('initialize', { protocolVersion: '2025-06-18', ...HANDSHAKES['Claude Desktop'] });
    expect(openingAnswers([rpc('ping'), plain])).toEqual([undefined, undefined]);
    expect(
      openingAnswers([rpc('initialize', { protocolVersion: '2026-07-28', ...HANDSHAKES['Claude Desktop'] })]),
    ).toEqual([undefined]);
    const answers = openingAnswers([
      plain,
      rpc('tools/call', { name: 'memory_open' }, 2),
      rpc('tools/list', undefined, 3),
    ]);
    expect(answers.slice(1)).toEqual([undefined, undefined]);
    expect(openingAnswers([plain, rpc('initialize', plain.params, 2)])[1]).toBeUndefined();
    expect(openingAnswers([plain, rpc('tools/list', { cursor: 'x' }, 2)])[1]).toBeUndefined();
  });
});

describe('the stdio transport with the opening', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A transport with the opening, the SDK connected only when the test says. */
  function openingWire(parse: ParseMessage = parseMessage) {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const lines = new LineQueue(stdout);
    const reports: string[] = [];
    const loadSdk = vi.fn();
    const options = serverOptions();
    const transport = new StdioLineTransport(stdin, stdout, (line) => reports.push(line), parse, {
      opening: { answerer: createStdioOpening(options), loadSdk },
    });
    transport.listen();
    let handle: ReturnType<typeof serveStdio> | undefined;
    return {
      options,
      lines,
      reports,
      loadSdk,
      transport,
      write: (...messages: unknown[]) =>
        stdin.write(messages.map((message) => `${JSON.stringify(message)}\n`).join('')),
      end: () => stdin.end(),
      connect: () => {
        handle = serveStdio(createMcpServerFactory(options), { transport });
      },
      close: () => (handle ?? transport).close(),
    };
  }

  const settle = () => new Promise((resolve) => setImmediate(resolve));
  const initialize = rpc('initialize', { protocolVersion: '2025-06-18', ...HANDSHAKES['Claude Code'] }, 1);

  it('answers the opening without the SDK, then hands the SDK what waited, in order, after replaying the opening', async () => {
    const wire = openingWire();
    try {
      wire.write(initialize, INITIALIZED, rpc('tools/list', undefined, 2));
      expect(JSON.parse(await wire.lines.next())).toMatchObject({ id: 1, result: { protocolVersion: '2025-06-18' } });
      expect(JSON.parse(await wire.lines.next())).toMatchObject({ id: 2, result: { tools: expect.any(Array) } });
      expect(wire.loadSdk).not.toHaveBeenCalled();

      const write = { name: 'topics/early', description: 'Early', new: 'before the SDK' };
      wire.write(rpc('tools/call', { name: 'memory_write', arguments: write }, 3));
      wire.write(rpc('tools/call', { name: 'memory_open', arguments: { names: ['topics/early'] } }, 4));
      await settle();
      expect(wire.loadSdk).toHaveBeenCalled();
      expect(wire.lines.pending).toBe(0);

      wire.connect();
      const answers = [JSON.parse(await wire.lines.next()), JSON.parse(await wire.lines.next())];
      expect(answers.map((answer) => answer.id)).toEqual([3, 4]);
      expect(answers[1].result.content[0].text).toContain('before the SDK');
      // The SDK knows the client from the replayed handshake: the history names it.
      const history = await wire.options.store.history('local', 'topics/early');
      expect(history.map((revision) => revision.actor)).toEqual([actorLabel('claude-code', 'mcp')]);
      expect(wire.reports).toEqual([]);
    } finally {
      await wire.close();
    }
  });

  it('loads the SDK once the connection has been quiet after the opening', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    const wire = openingWire();
    try {
      wire.write(initialize);
      await wire.lines.next();
      vi.advanceTimersByTime(QUIET_BEFORE_SDK_MS - 1);
      wire.write(rpc('tools/list', undefined, 2));
      await wire.lines.next();
      vi.advanceTimersByTime(QUIET_BEFORE_SDK_MS - 1);
      expect(wire.loadSdk).not.toHaveBeenCalled();
      vi.advanceTimersByTime(1);
      expect(wire.loadSdk).toHaveBeenCalledTimes(1);
    } finally {
      await wire.close();
    }
  });

  it('loads the SDK at once when the first message is not a handshake it can answer', async () => {
    const wire = openingWire();
    try {
      wire.write(rpc('ping', undefined, 'first'));
      await settle();
      expect(wire.loadSdk).toHaveBeenCalled();
      wire.connect();
      expect(JSON.parse(await wire.lines.next())).toEqual({ jsonrpc: '2.0', id: 'first', result: {} });
    } finally {
      await wire.close();
    }
  });

  it('serves what waited when the input ends before the SDK is loaded, then closes', async () => {
    const wire = openingWire();
    wire.write(
      initialize,
      INITIALIZED,
      rpc('tools/call', { name: 'memory_write', arguments: { name: 'topics/piped', description: 'P', new: 'x' } }, 2),
    );
    wire.end();
    await wire.lines.next();
    await settle();
    wire.connect();
    expect(JSON.parse(await wire.lines.next())).toMatchObject({ id: 2, result: { isError: false } });
    await wire.transport.closed;
    expect((await wire.options.store.history('local', 'topics/piped')).length).toBe(1);
  });

  it('closes at once when the input ends with nothing waiting, the SDK never loaded', async () => {
    const wire = openingWire();
    wire.write(initialize);
    await wire.lines.next();
    wire.end();
    await wire.transport.closed;
    expect(wire.loadSdk).not.toHaveBeenCalled();
  });

  it('reports an SDK that answers the replayed initialize otherwise, and writes its answer nowhere', async () => {
    const wire = openingWire();
    try {
      wire.write(initialize);
      const sent = await wire.lines.next();
      const handle = serveStdio(createMcpServerFactory({ ...wire.options, version: '9.9.9-other' }), {
        transport: wire.transport,
      });
      wire.write(rpc('ping', undefined, 2));
      expect(JSON.parse(await wire.lines.next())).toMatchObject({ id: 2 });
      expect(wire.reports).toEqual([expect.stringContaining('otherwise than the opening did')]);
      expect(wire.reports[0]).toContain(sent);
      await handle.close();
    } finally {
      await wire.close();
    }
  });
  /** The SDK's parsing, with the replayed handshake changed by `change` (an SDK that takes it otherwise). */
  const replayedAs =
    (change: (params: Record<string, unknown>) => unknown): ParseMessage =>
    (json, unit) => {
      const message = json as { method?: unknown; params?: Record<string, unknown> };
      if (message.method !== 'initialize' || message.params === undefined) return parseMessage(json, unit);
      const changed = change(message.params);
      return changed === undefined
        ? { code: JSON_RPC_ERROR.InvalidRequest, message: 'refused' }
        : parseMessage({ ...message, params: changed }, unit);
    };

  it.each([
    ['refuses the replayed initialize', replayedAs(() => undefined), 'refused the replayed initialize'],
    [
      'negotiates another protocol version',
      replayedAs((params) => ({ ...params, protocolVersion: '1999-01-01' })),
      'not the one the client was told of',
    ],
    [
      'answers the replayed initialize with an error',
      replayedAs((params) => ({ ...params, protocolVersion: 5 })),
      'not the one the client was told of',
    ],
    [
      'fails on the replayed initialize',
      replayedAs(() => {
        throw new Error('broken');
      }),
      'failed on the replayed initialize (broken)',
    ],
  ])('closes the connection, reporting why, when the SDK %s', async (_what, parse, why) => {
    const wire = openingWire(parse);
    try {
      wire.write(initialize, rpc('tools/call', { name: 'memory_open' }, 2));
      await wire.lines.next();
      await settle();
      wire.connect();
      await wire.transport.closed;
      expect(wire.reports).toContainEqual(expect.stringContaining(why));
      expect(wire.reports.at(-1)).toMatch(/closing the connection$/);
      expect(wire.lines.pending).toBe(0);
    } finally {
      await wire.close();
    }
  });

  it('answers each waiting request with an error when the SDK cannot be loaded, then closes', async () => {
    const wire = openingWire();
    wire.write(initialize, INITIALIZED, rpc('resources/list', undefined, 2), { jsonrpc: '2.0', method: 'x/note' });
    wire.write(rpc('tools/call', { name: 'memory_open' }, 'three'));
    await wire.lines.next();
    await settle();
    wire.transport.abandon('the MCP SDK could not be loaded (gone)');
    const answers = [JSON.parse(await wire.lines.next()), JSON.parse(await wire.lines.next())];
    expect(answers).toEqual(
      [2, 'three'].map((id) => ({
        jsonrpc: '2.0',
        id,
        error: {
          code: JSON_RPC_ERROR.InternalError,
          message: 'Internal error: the MCP SDK could not be loaded (gone)',
        },
      })),
    );
    await wire.transport.closed;
  });

  it('replays nothing into an SDK that connects after the connection closed, and tells it so', async () => {
    const wire = openingWire();
    wire.write(initialize);
    await wire.lines.next();
    await wire.transport.close();
    const closed = vi.fn();
    wire.transport.onclose = closed;
    await wire.transport.start();
    expect(closed).toHaveBeenCalled();
    await settle();
    expect(wire.lines.pending).toBe(0);
  });
});

describe('serveMcpStdio', () => {
  /** A whole session through serveMcpStdio with and without the fast path: the same lines back. */
  async function session(fastPath: boolean): Promise<string[]> {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const lines = new LineQueue(stdout);
    const handle = serveMcpStdio(serverOptions(), () => {}, { fastPath, stdin, stdout });
    const ask = (message: unknown) => {
      stdin.write(`${JSON.stringify(message)}\n`);
      return lines.next();
    };
    try {
      const answers = [await ask(initialize())];
      stdin.write(`${JSON.stringify(INITIALIZED)}\n`);
      answers.push(await ask(rpc('tools/list', undefined, 2)));
      answers.push(await ask(rpc('resources/list', undefined, 3)));
      answers.push(
        await ask(
          rpc('tools/call', { name: 'memory_write', arguments: { name: 'a/b', description: 'D', new: 'x' } }, 4),
        ),
      );
      answers.push(await ask(rpc('tools/call', { name: 'memory_open', arguments: { names: ['a/b'] } }, 5)));
      return answers;
    } finally {
      stdin.end();
      await handle.closed;
    }
  }
  const initialize = () => rpc('initialize', { protocolVersion: '2025-11-25', ...HANDSHAKES['Claude Desktop'] }, 1);

  it('answers a session with the opening and lazy SDK byte for byte as the SDK alone does', async () => {
    expect(await session(true)).toEqual(await session(false));
  });

  /**
   * Every message written at once, without waiting for answers: the answers by id once all
   * have come, and the entries' histories.
   */
  async function pipelined(fastPath: boolean, messages: readonly unknown[]) {
    const stdin = new PassThrough();
    const stdout = new PassThrough();
    const lines = new LineQueue(stdout);
    const options = serverOptions();
    const handle = serveMcpStdio(options, () => {}, { fastPath, stdin, stdout });
    stdin.write(messages.map((message) => `${JSON.stringify(message)}\n`).join(''));
    const answers = new Map<unknown, string>();
    const requests = messages.filter((message) => 'id' in (message as object)).length;
    while (answers.size < requests) {
      const line = await lines.next();
      answers.set((JSON.parse(line) as { id: unknown }).id, line);
    }
    stdin.end();
    await handle.closed;
    const histories = await Promise.all(
      ['a/one', 'a/two'].map(async (name) =>
        (await options.store.history('local', name)).map((revision) => [revision.body, revision.actor]),
      ),
    );
    return { answers, histories };
  }

  it('applies pipelined calls in arrival order and answers them as the SDK alone does', async () => {
    const name = fc.constantFrom('a/one', 'a/two');
    const call = fc.oneof(
      fc.record({ write: name, text: fc.constantFrom('x', 'y', 'z') }),
      fc.record({ open: name }),
      fc.constantFrom('ping', 'tools/list', 'resources/list', 'prompts/list'),
    );
    await fc.assert(
      fc.asyncProperty(fc.array(call, { maxLength: 12 }), async (calls) => {
        const messages: unknown[] = [initialize(), INITIALIZED];
        calls.forEach((step, at) => {
          const id = at + 2;
          if (typeof step === 'string') messages.push(rpc(step, undefined, id));
          else if ('write' in step) {
            const args = { name: step.write, description: 'D', new: step.text };
            messages.push(rpc('tools/call', { name: 'memory_write', arguments: args }, id));
          } else messages.push(rpc('tools/call', { name: 'memory_open', arguments: { names: [step.open] } }, id));
        });
        const [withOpening, sdkAlone] = [await pipelined(true, messages), await pipelined(false, messages)];
        expect(withOpening.histories).toEqual(sdkAlone.histories);
        expect(withOpening.answers).toEqual(sdkAlone.answers);
      }),
      { numRuns: 25 },
    );
  });
});
