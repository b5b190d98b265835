/**
 * The hot path of MCP over stdio, answered without the SDK: on a connection the SDK has
 * pinned to the 2025 era (it opened with a plain `initialize` that the SDK answered with
 * success), one `ping`, `tools/list` or `tools/call` in its simplest shape (hot-request.ts)
 * is answered straight from the tool handler, byte for byte the line the SDK would write.
 * The SDK's server costs several hundred microseconds per message on top of the call, and
 * even its parsing of a message costs more than the rest of the answer: a line is offered
 * here as plain JSON first, and parsed for the SDK only when it is not taken.
 *
 * Everything else goes to the SDK as before (the opening, answered before the SDK is
 * loaded, is stdio-opening.ts's, and reaches the SDK replayed): any later `initialize`,
 * resources, prompts, completions, notifications, responses, 2026 envelopes, anything
 * unusual. Order is kept: a hot request takes the fast path only while no request handed
 * to the SDK is still unanswered, so the tool handler is always entered in the order the
 * requests arrived. A `notifications/cancelled` naming a fast request in flight silences
 * its answer, as the SDK does for its own; the notification still reaches the SDK. Nothing
 * is taken before the fast path has proved itself against the SDK (hot-answer-proof.ts),
 * nor ever if the proof failed. The proof waits until the client's opening exchange is
 * over (a connection armed and quiet for QUIET_BEFORE_PROOF_MS, or armed for
 * PROOF_AT_LATEST_MS when a busy client is never quiet): run at start it took some 60 ms
 * of a cold process's CPU, the time a client waited for its first `tools/list`. Until it
 * has passed, the SDK answers everything, as it always could.
 */

import type { JSONRPCMessage } from '@modelcontextprotocol/server';
import type { Caller } from '../memory/memory.js';
import type { Policy } from '../memory/model/policy.js';
import type { ToolHandler } from '../memory/tools/handler.js';
import { createHotAnswerer, hotRequest, type RequestId } from './hot-request.js';

export interface StdioFastPathOptions {
  readonly handler: ToolHandler;
  readonly policy: Pick<Policy, 'groups'>;
  /** Whom the tools act for, given the client name from the `initialize` handshake. */
  readonly caller: (clientName: string) => Caller;
  /** Whether the SDK answers as the hot answerer does (stdio-sdk.ts, proveStdioAnswers); asked once, when the connection is quiet. */
  readonly prove: () => Promise<boolean>;
}

/**
 * How long an armed connection stays without a message before the proof runs: a client's
 * opening (`initialized`, `tools/list`, resources and prompts listed) comes in one burst,
 * each message right after the answer before it.
 */
export const QUIET_BEFORE_PROOF_MS = 100;
/** How long after arming the proof runs even if the client was never quiet that long. */
export const PROOF_AT_LATEST_MS = 1000;

/** What the stdio transport asks of a fast path. */
export interface StdioFastPath {
  /**
   * Answers a hot request itself, from its JSON as the client wrote it, writing the
   * answer line through `write`, and returns true; or returns false, and the transport
   * parses the message for the SDK. Offered every message first, before the SDK's
   * parsing: that costs more than the whole answer, and a hot request always passes it.
   */
  take(json: unknown, write: (line: string) => void): boolean;
  /** Sees every message handed to the SDK. */
  given(message: JSONRPCMessage): void;
  /** Sees every message the SDK sends to the client. */
  sent(message: JSONRPCMessage): void;
}

/**
 * opening: nothing received yet; initializing: the SDK holds the opening `initialize`;
 * armed: the SDK answered it with success (the caller, which the client name alone
 * decides, is worked out once); off: this connection is the SDK's alone.
 */
type Phase =
  | { readonly kind: 'opening' }
  | { readonly kind: 'initializing'; readonly id: RequestId; readonly clientName: string }
  | { readonly kind: 'armed'; readonly caller: () => Caller }
  | { readonly kind: 'off' };

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The request id a message carries when it is a request (a method and an id). */
function requestId(message: JSONRPCMessage): RequestId | undefined {
  return 'method' in message && 'id' in message ? (message.id as RequestId) : undefined;
}

/** The client's name, when `message` is a 2025-era `initialize` the SDK pins to that era (no envelope). */
function plainInitialize(message: JSONRPCMessage): string | undefined {
  if (!('method' in message) || message.method !== 'initialize' || !('id' in message)) return undefined;
  const params = message.params;
  if (!isObject(params) || '_meta' in params || !isObject(params.clientInfo)) return undefined;
  return typeof params.clientInfo.name === 'string' ? params.clientInfo.name : undefined;
}

/** The SDK's answer to a request whose handler threw: the error's code when it has one, else Internal error. */
function failureMessage(id: RequestId, error: unknown): string {
  const { code, message } = (isObject(error) ? error : {}) as { code?: unknown; message?: unknown };
  return JSON.stringify({
    jsonrpc: '2.0',
    id,
    error: {
      code: Number.isSafeInteger(code) ? code : -32603,
      message: typeof message === 'string' ? message : 'Internal error',
    },
  });
}

export function createStdioFastPath(options: StdioFastPathOptions): StdioFastPath {
  const answer = createHotAnswerer(options.handler, options.policy);
  let proved = false;
  /** The proof's timer while it waits for quiet; 'started' once asked. */
  let proof: ReturnType<typeof setTimeout> | 'started' | undefined;
  /** When the connection was armed (Date.now()), for PROOF_AT_LATEST_MS. */
  let armedAt = 0;
  let phase: Phase = { kind: 'opening' };
  /** Requests handed to the SDK and not yet answered. */
  const sdkPending = new Set<RequestId>();
  /** Fast requests in flight, each with whether it has been cancelled. */
  const inFlight = new Map<RequestId, { cancelled: boolean }>();

  function armed(clientName: string): Phase {
    armedAt = Date.now();
    let caller: Caller | undefined;
    return { kind: 'armed', caller: () => (caller ??= options.caller(clientName)) };
  }

  /** (Re)starts the wait for quiet, on an armed connection whose proof has not been asked yet. */
  function awaitQuiet(): void {
    if (proof === 'started' || phase.kind !== 'armed') return;
    if (proof !== undefined) clearTimeout(proof);
    const latest = armedAt + PROOF_AT_LATEST_MS - Date.now();
    proof = setTimeout(
      () => {
        proof = 'started';
        options.prove().then(
          (outcome) => {
            proved = outcome;
          },
          // A proof that could not be made proves nothing: the SDK answers everything.
          () => {},
        );
      },
      Math.max(0, Math.min(QUIET_BEFORE_PROOF_MS, latest)),
    );
    proof.unref();
  }

  return {
    take(json, write) {
      awaitQuiet();
      if (!proved || phase.kind !== 'armed' || sdkPending.size !== 0) return false;
      const request = hotRequest(json);
      if (request === undefined || inFlight.has(request.id)) return false;
      const flight = { cancelled: false };
      inFlight.set(request.id, flight);
      const caller = phase.caller;
      const finish = (line: string) => {
        inFlight.delete(request.id);
        if (!flight.cancelled) write(`${line}\n`);
      };
      answer(request, caller).then(finish, (error: unknown) => finish(failureMessage(request.id, error)));
      return true;
    },
    given(message) {
      if (phase.kind === 'opening') {
        const clientName = plainInitialize(message);
        phase =
          clientName === undefined ? { kind: 'off' } : { kind: 'initializing', id: requestId(message)!, clientName };
      } else if (phase.kind === 'armed' && 'method' in message && message.method === 'initialize') {
        phase = { kind: 'off' };
      }
      const id = requestId(message);
      if (id !== undefined) sdkPending.add(id);
      if ('method' in message && message.method === 'notifications/cancelled' && !('id' in message)) {
        const cancelled = isObject(message.params) ? message.params.requestId : undefined;
        const flight = inFlight.get(cancelled as RequestId);
        if (flight) flight.cancelled = true;
      }
    },
    sent(message) {
      if ('method' in message || !('id' in message)) return;
      const id = message.id as RequestId;
      sdkPending.delete(id);
      if (phase.kind === 'initializing' && id === phase.id) {
        phase = 'result' in message ? armed(phase.clientName) : { kind: 'off' };
      }
      awaitQuiet();
    },
  };
}
