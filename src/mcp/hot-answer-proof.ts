/**
 * The fast paths' proof, made each time one starts, against the SDK it runs with. The hot
 * answers (hot-request.ts) are the SDK's byte for byte only while the SDK serializes as
 * it did when they were written; rather than pin one SDK version, a fast path asks the
 * SDK itself, in process, to answer a sample of hot requests for a stub tool handler —
 * ping, tools/list, a tool's success and its refusal, an unknown tool, arguments no
 * schema allows, string and negative ids — and compares each answer with the hot
 * answerer's for the same handler. One byte apart and the fast path stays off: the SDK
 * answers everything, as with its switch off. The differential tests
 * (test/mcp/fast-path.test.ts, stdio-fast-path.test.ts) prove the rest, on real tools and
 * every protocol version, against whatever SDK is installed.
 */

import type { Caller } from '../memory/memory.js';
import type { Policy } from '../memory/model/policy.js';
import type { ToolHandler, ToolResult } from '../memory/tools/handler.js';
import { createHotAnswerer, hotRequest } from './hot-request.js';
import type { McpServerOptions } from './server.js';

/** The stub tool handler's fixed answers, with text that JSON escapes (quotes, a newline, non-ASCII). */
const PROOF_RESULTS: Readonly<Record<string, ToolResult>> = {
  memory_open: { text: 'proof: "opened" — ünïcode\nsecond line', isError: false },
  memory_write: { text: 'proof: refused <tag> & \\ backslash', isError: true },
  memory_drop: { text: '', isError: false },
};

const proofHandler: ToolHandler = async (_caller, tool) => PROOF_RESULTS[tool] ?? { text: 'unknown', isError: true };

const PROOF_CALLER: Caller = { user: 'proof', label: 'proof' };

const request = (id: number | string, method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) });

/** The requests both sides answer: one of each hot shape and answer. */
export const PROOF_REQUESTS: readonly string[] = [
  request(1, 'ping'),
  request('ping-2', 'ping', {}),
  request(2, 'tools/list'),
  request(3, 'tools/call', { name: 'memory_open', arguments: {} }),
  request('call-4', 'tools/call', { name: 'memory_write', arguments: { name: 'x', new: 'y' } }),
  request(-5, 'tools/call', { name: 'memory_drop' }),
  request(6, 'tools/call', { name: 'memory_open', arguments: { names: 5, extra: [null] } }),
  request(7, 'tools/call', { name: 'memory_forget', arguments: {} }),
];

/** What the SDK is built with for the proof: the stub handler, the policy's tools. */
export function proofServerOptions(options: Pick<McpServerOptions, 'policy' | 'version'>): McpServerOptions {
  return {
    handler: proofHandler,
    memory: { names: () => Promise.reject(new Error('the proof completes no names')) },
    policy: options.policy,
    version: options.version,
    caller: () => PROOF_CALLER,
  };
}

/** An SDK that has not answered the whole proof by then has failed it. */
const PROOF_TIMEOUT_MS = 10_000;

/**
 * Whether the SDK, asked through `askSdk` (one request's text in, the JSON-RPC message it
 * answers out), answers every proof request byte for byte as the hot answerer does. A
 * failure to ask, or no answer within PROOF_TIMEOUT_MS, counts as a difference.
 */
export async function proveHotAnswers(
  policy: Pick<Policy, 'groups'>,
  askSdk: (request: string) => Promise<string>,
): Promise<boolean> {
  const answer = createHotAnswerer(proofHandler, policy);
  const compare = async () => {
    for (const text of PROOF_REQUESTS) {
      const hot = hotRequest(JSON.parse(text));
      if (hot === undefined) return false;
      const [ours, theirs] = await Promise.all([answer(hot, () => PROOF_CALLER), askSdk(text)]);
      if (ours !== theirs) return false;
    }
    return true;
  };
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), PROOF_TIMEOUT_MS).unref();
  });
  try {
    return await Promise.race([compare(), timeout]);
  } catch {
    return false;
  } finally {
    clearTimeout(timer);
  }
}
