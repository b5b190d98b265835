/**
 * Invariant of the fast paths (docs/accelerators.md): a hot request is answered byte for
 * byte as the SDK in use would answer it, or by the SDK itself. Each fast path proves
 * itself against the SDK it runs with before it answers anything (hot-answer-proof.ts):
 * the proof passes with the installed SDK on both doors, fails when any one answer
 * differs by one byte or asking fails, and a stdio fast path takes nothing until proved.
 */

import { createMcpHandler } from '@modelcontextprotocol/server';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PROOF_REQUESTS, proofServerOptions, proveHotAnswers } from '../../src/mcp/hot-answer-proof.js';
import { askOverHttp, proveHttpAnswers } from '../../src/mcp/http.js';
import { createMcpServerFactory } from '../../src/mcp/server.js';
import { proveStdioAnswers } from '../../src/mcp/stdio.js';
import { createStdioFastPath } from '../../src/mcp/stdio-fast-path.js';
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
  const armedFastPath = (proof: Promise<boolean>) => {
    const fastPath = createStdioFastPath({
      handler: async () => ({ text: 'done', isError: false }),
      policy: DEFAULT_POLICY,
      caller: () => ({ user: 'local', label: 'mcp' }),
      proof,
    });
    const clientInfo = { name: 'client', version: '1' };
    const params = { protocolVersion: '2025-06-18', capabilities: {}, clientInfo };
    fastPath.given({ jsonrpc: '2.0', id: 0, method: 'initialize', params });
    fastPath.sent({ jsonrpc: '2.0', id: 0, result: {} });
    return fastPath;
  };
  const ping = { jsonrpc: '2.0', id: 1, method: 'ping' };

  it('takes a hot request once proved', async () => {
    const proof = Promise.resolve(true);
    const fastPath = armedFastPath(proof);
    await proof;
    expect(fastPath.take(ping, () => {})).toBe(true);
  });

  it('leaves it to the SDK while the proof runs', () => {
    const fastPath = armedFastPath(new Promise<boolean>(() => {}));
    expect(fastPath.take(ping, () => {})).toBe(false);
  });

  it('leaves it to the SDK when the proof failed', async () => {
    const proof = Promise.resolve(false);
    const fastPath = armedFastPath(proof);
    await proof;
    expect(fastPath.take(ping, () => {})).toBe(false);
  });
});
