/**
 * Invariant of the fast paths (docs/accelerators.md): a hot request is answered byte for
 * byte as the SDK in use would answer it, or by the SDK itself. Each fast path proves
 * itself against the SDK it runs with before it answers anything (hot-answer-proof.ts):
 * the proof passes with the installed SDK on both doors, fails when any one answer
 * differs by one byte or asking fails, and a stdio fast path takes nothing until proved.
 */

import { createMcpHandler } from '@modelcontextprotocol/server';
import { afterEach, beforeEach, describe, expect, it, onTestFinished, vi } from 'vitest';
import { PROOF_REQUESTS, proofServerOptions, proveHotAnswers } from '../../src/mcp/hot-answer-proof.js';
import { askOverHttp, proveHttpAnswers } from '../../src/mcp/http.js';
import { createMcpServerFactory } from '../../src/mcp/server.js';
import { createStdioFastPath, PROOF_AT_LATEST_MS, QUIET_BEFORE_PROOF_MS } from '../../src/mcp/stdio-fast-path.js';
import { proveStdioAnswers } from '../../src/mcp/stdio-sdk.js';
import { DEFAULT_POLICY } from '../../src/memory/model/policy.js';

const options = { policy: DEFAULT_POLICY, version: '0.0.0-test' };

describe('the fast paths prove themselves against the installed SDK', () => {
  it('over HTTP', async () => {
    expect(await proveHttpAnswers(options)).toBe(true);
  });

  it('over stdio', async () => {
    expect(await proveStdioAnswers(options)).toBe(true);
  });
});

describe('the proof fails on any difference', () => {
  /** The installed SDK, asked over HTTP in process. */
  const sdk = () => {
    const handler = createMcpHandler(createMcpServerFactory(proofServerOptions(options)), { legacy: 'stateless' });
    onTestFinished(() => handler.close());
    return askOverHttp(handler);
  };

  it.each(PROOF_REQUESTS.map((request, at) => [at, request] as const))(
    'when the SDK answers request %i (%s) one byte otherwise',
    async (at) => {
      const ask = sdk();
      const altered = async (request: string) => {
        const answer = await ask(request);
        return request === PROOF_REQUESTS[at] ? `${answer} ` : answer;
      };
      expect(await proveHotAnswers(DEFAULT_POLICY, ask)).toBe(true);
      expect(await proveHotAnswers(DEFAULT_POLICY, altered)).toBe(false);
    },
  );

  it('when asking fails', async () => {
    const gone = async () => {
      throw new Error('the SDK is gone');
    };
    expect(await proveHotAnswers(DEFAULT_POLICY, gone)).toBe(false);
  });
});

describe('a stdio fast path takes nothing until proved, and nothing if refuted', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  /** A fast path armed by a 2025 initialize the SDK answered, proving itself with `proof` once asked. */
  const armedFastPath = (proof: Promise<boolean>) => {
    const asked = { count: 0 };
    const fastPath = createStdioFastPath({
      handler: async () => ({ text: 'done', isError: false }),
      policy: DEFAULT_POLICY,
      caller: () => ({ user: 'local', label: 'mcp' }),
      prove: () => {
        asked.count++;
        return proof;
      },
    });
    const clientInfo = { name: 'client', version: '1' };
    const params = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo };
    fastPath.given({ jsonrpc: '2.0', id: 0, method: 'initialize', params });
    fastPath.sent({ jsonrpc: '2.0', id: 0, result: {} });
    return { fastPath, asked };
  };
  const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

  it('asks for the proof once, after the connection was quiet, and takes a hot request once proved', async () => {
    const proof = Promise.resolve(true);
    const { fastPath, asked } = armedFastPath(proof);
    vi.advanceTimersByTime(QUIET_BEFORE_PROOF_MS - 1);
    expect(fastPath.take(ping, () => {})).toBe(false);
    vi.advanceTimersByTime(QUIET_BEFORE_PROOF_MS - 1);
    expect(asked.count).toBe(0);
    vi.advanceTimersByTime(1);
    expect(asked.count).toBe(1);
    await proof;
    expect(fastPath.take(ping, () => {})).toBe(true);
    vi.advanceTimersByTime(QUIET_BEFORE_PROOF_MS * 10);
    expect(asked.count).toBe(1);
  });

  it('asks for it at the latest a second after arming, from a client never quiet that long', () => {
    const { fastPath, asked } = armedFastPath(new Promise<boolean>(() => {}));
    const step = QUIET_BEFORE_PROOF_MS / 2;
    for (let waited = 0; waited < PROOF_AT_LATEST_MS - step; waited += step) {
      fastPath.take(ping, () => {});
      vi.advanceTimersByTime(step);
    }
    expect(asked.count).toBe(0);
    // A message now would put quiet off till 100 ms on; the second since arming ends in 50.
    fastPath.take(ping, () => {});
    vi.advanceTimersByTime(step);
    expect(asked.count).toBe(1);
  });

  it('leaves it to the SDK while the proof runs', () => {
    const { fastPath, asked } = armedFastPath(new Promise<boolean>(() => {}));
    vi.advanceTimersByTime(QUIET_BEFORE_PROOF_MS);
    expect(asked.count).toBe(1);
    expect(fastPath.take(ping, () => {})).toBe(false);
  });

  it('leaves it to the SDK when the proof failed', async () => {
    const proof = Promise.resolve(false);
    const { fastPath } = armedFastPath(proof);
    vi.advanceTimersByTime(QUIET_BEFORE_PROOF_MS);
    await proof;
    expect(fastPath.take(ping, () => {})).toBe(false);
  });
});
