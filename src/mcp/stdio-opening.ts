/**
 * The opening of an `engram stdio` connection, answered before the MCP SDK is loaded.
 * Loading the SDK (a megabyte of code: the SDK and zod, whose schemas are built as it
 * loads) took about 80 ms of a cold process, most of the time a client waited from
 * starting Engram to its first `tools/list` (DESIGN §7: within 2x of a bare Node process
 * answering it). So the client's opening — a plain 2025-era `initialize`, its
 * `notifications/initialized`, then `tools/list` and `ping` — is answered here, byte for
 * byte as the SDK answers it (test/mcp/stdio-opening.test.ts proves it against the SDK,
 * for every version and for fuzzed handshakes), and the SDK is loaded once the connection
 * is quiet or the first message only it can answer arrives (stdio-transport.ts). The
 * transport then replays the opening into the SDK, so that it knows the client as if it
 * had answered it, and checks that it answers `initialize` as this did.
 *
 * Only a handshake the SDK is certain to accept is taken: a supported 2025-era version
 * (echoed back, as the SDK does), a client's name and version, and capabilities of the
 * shapes its schema allows; anything else, anything with `_meta`, and every message
 * after the first one not taken, is the SDK's.
 */

import type { Policy } from '../memory/model/policy.js';
import {
  hasOnlyKeys,
  hotRequest,
  isPlainObject,
  type RequestId,
  resultMessage,
  toolListResult,
} from './hot-request.js';
import { SERVER_INSTRUCTIONS, serverCapabilities, serverInfo } from './identity.js';

/**
 * The 2025-era protocol versions the SDK echoes back when a client asks for one of them
 * (its SUPPORTED_PROTOCOL_VERSIONS before the 2026 era; the test holds them to it). A
 * client asking for any other is answered by the SDK.
 */
export const OPENING_PROTOCOL_VERSIONS: readonly string[] = [
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
];

/** A message the opening took that the SDK must be told of once loaded, with the line answered to it, if any. */
export interface TakenMessage {
  readonly json: unknown;
  readonly answer?: string;
}

export interface StdioOpening {
  /**
   * Answers `json` itself, writing the answer line (newline included) through `write`,
   * and returns true; or returns false, and from then on every message is the SDK's.
   */
  take(json: unknown, write: (line: string) => void): boolean;
  /** What was taken, in order of arrival: the SDK replays it before anything else. */
  readonly taken: readonly TakenMessage[];
}

const isString = (value: unknown): value is string => typeof value === 'string';

/** Every member of `value` a JSON object (the SDK's JSONObjectSchema). */
const objectsOnly = (value: unknown): boolean => isPlainObject(value) && Object.values(value).every(isPlainObject);

/**
 * Whether the SDK's schema of client capabilities certainly accepts `value`: only the
 * capabilities written here, each in a shape it allows; anything else is left to it.
 */
function acceptedCapabilities(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  return Object.entries(value).every(([name, capability]) => {
    if (!isPlainObject(capability)) return false;
    switch (name) {
      case 'roots':
        return (
          hasOnlyKeys(capability, ['listChanged']) && ['undefined', 'boolean'].includes(typeof capability.listChanged)
        );
      case 'sampling':
        return hasOnlyKeys(capability, ['context', 'tools']) && objectsOnly(capability);
      case 'elicitation': {
        const form = capability.form;
        const formAccepted =
          form === undefined || (isPlainObject(form) && ['undefined', 'boolean'].includes(typeof form.applyDefaults));
        return hasOnlyKeys(capability, ['form', 'url']) && objectsOnly(capability) && formAccepted;
      }
      case 'experimental':
      case 'extensions':
        return objectsOnly(capability);
      default:
        return false;
    }
  });
}

/** The client's description of itself, when every member is one the SDK's schema certainly accepts. */
function acceptedClientInfo(value: unknown): boolean {
  return (
    isPlainObject(value) &&
    hasOnlyKeys(value, ['name', 'version', 'title', 'description', 'websiteUrl']) &&
    isString(value.name) &&
    isString(value.version) &&
    Object.values(value).every(isString)
  );
}

/** The request id and protocol version of a plain 2025-era `initialize` the SDK certainly answers with success. */
function plainInitialize(json: unknown): { readonly id: RequestId; readonly version: string } | undefined {
  if (!isPlainObject(json) || !hasOnlyKeys(json, ['jsonrpc', 'id', 'method', 'params'])) return undefined;
  const { jsonrpc, id, method, params } = json;
  if (jsonrpc !== '2.0' || method !== 'initialize' || !(isString(id) || Number.isSafeInteger(id))) return undefined;
  if (!isPlainObject(params) || !hasOnlyKeys(params, ['protocolVersion', 'capabilities', 'clientInfo']))
    return undefined;
  const { protocolVersion, capabilities, clientInfo } = params;
  if (!isString(protocolVersion) || !OPENING_PROTOCOL_VERSIONS.includes(protocolVersion)) return undefined;
  if (!acceptedCapabilities(capabilities) || !acceptedClientInfo(clientInfo)) return undefined;
  return { id: id as RequestId, version: protocolVersion };
}

/** `notifications/initialized`, with no parameters or empty ones. */
function isInitialized(json: unknown): boolean {
  if (!isPlainObject(json) || !hasOnlyKeys(json, ['jsonrpc', 'method', 'params'])) return false;
  const { jsonrpc, method, params } = json;
  const noParams = params === undefined || (isPlainObject(params) && Object.keys(params).length === 0);
  return jsonrpc === '2.0' && method === 'notifications/initialized' && noParams;
}

export function createStdioOpening(options: {
  readonly policy: Pick<Policy, 'groups'>;
  readonly version: string;
}): StdioOpening {
  const toolList = toolListResult(options.policy);
  const taken: TakenMessage[] = [];
  /** fresh: nothing received; open: initialize answered here; over: everything is the SDK's. */
  let phase: 'fresh' | 'open' | 'over' = 'fresh';

  function initializeAnswer(id: RequestId, protocolVersion: string): string {
    const result = {
      protocolVersion,
      capabilities: serverCapabilities(),
      serverInfo: serverInfo(options.version),
      instructions: SERVER_INSTRUCTIONS,
    };
    return resultMessage(id, JSON.stringify(result));
  }

  /**
   * The line answering `json`, undefined for a notification taken, false for a message not
   * taken. The handshake and `notifications/initialized` are kept for the replay; `tools/list`
   * and `ping` change nothing the SDK keeps.
   */
  function answerInOpening(json: unknown): string | undefined | false {
    if (phase === 'fresh') {
      const initialize = plainInitialize(json);
      if (initialize === undefined) return false;
      phase = 'open';
      const answer = initializeAnswer(initialize.id, initialize.version);
      taken.push({ json, answer });
      return answer;
    }
    if (isInitialized(json)) {
      taken.push({ json });
      return undefined;
    }
    const request = hotRequest(json);
    if (request?.method === 'tools/list') return resultMessage(request.id, toolList);
    if (request?.method === 'ping') return resultMessage(request.id, '{}');
    return false;
  }

  return {
    taken,
    take(json, write) {
      if (phase === 'over') return false;
      const answer = answerInOpening(json);
      if (answer === false) {
        phase = 'over';
        return false;
      }
      if (answer !== undefined) write(`${answer}\n`);
      return true;
    },
  };
}
