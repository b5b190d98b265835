/**
 * The hot path of MCP over HTTP, answered without the SDK: one 2025-era `tools/call`,
 * `tools/list` or `ping` request is answered as one `application/json` body (the
 * Streamable HTTP spec lets a server answer a POST so when the client accepts JSON),
 * straight from the tool handler. The SDK's stateless path builds a server, a transport
 * and Web streams for every POST, which costs several times the call itself.
 *
 * It answers only what it can answer exactly as the SDK would, byte for byte the same
 * JSON-RPC message: the SDK's own classifier must route the request to 2025-era serving
 * for want of a 2026 envelope claim, and the request must pass every check the SDK's
 * transport makes (Accept, Content-Type, protocol version) and carry nothing beyond the
 * fields hot-request.ts reads. Anything else (initialize, notifications, batches, 2026 requests,
 * malformed or unusual requests) is declined and goes to the SDK as before.
 */

import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { classifyInboundRequest, isJsonContentType, SUPPORTED_PROTOCOL_VERSIONS } from '@modelcontextprotocol/server';
import type { Caller } from '../memory/memory.js';
import type { Policy } from '../memory/model/policy.js';
import type { ToolHandler } from '../memory/tools/handler.js';
import { createHotAnswerer, type HotRequest, hotRequest } from './hot-request.js';

export interface FastPathOptions<Who> {
  readonly handler: ToolHandler;
  readonly policy: Pick<Policy, 'groups'>;
  /** Whom the tools act for: a 2025-era request names no client in its body (its Mcp-Session-Id may, see http.ts). */
  readonly caller: (who: Who) => Caller;
}

/** Answers the request and returns the promise of its end, or returns undefined for the SDK to answer it. */
export type FastPath<Who> = (
  req: IncomingMessage,
  res: ServerResponse,
  body: unknown,
  who: Who,
) => Promise<void> | undefined;

/** The transport checks the SDK would make first; failing any of them, the SDK answers the refusal. */
function passesTransportChecks(headers: IncomingHttpHeaders): boolean {
  const accept = headers.accept;
  const version = headers['mcp-protocol-version'];
  return (
    accept?.includes('application/json') === true &&
    accept.includes('text/event-stream') &&
    isJsonContentType(headers['content-type']) &&
    (version === undefined || (typeof version === 'string' && SUPPORTED_PROTOCOL_VERSIONS.includes(version))) &&
    headers['mcp-method'] === undefined &&
    headers['mcp-name'] === undefined
  );
}

/**
 * Whether the SDK would serve a hot request as 2025-era traffic for want of any envelope
 * claim. A hot request (hot-request.ts) is a well-formed JSON-RPC request whose params
 * hold no `_meta`, so it carries no claim, and the SDK's classifier decides from the
 * protocol version header and the method alone: its answer for one representative body
 * per header and method is the answer for every such request. It is asked once for each
 * (a few supported versions times three methods), not on every request, where its Zod
 * schemas cost a tenth of the request.
 */
function createEraCheck(): (version: string | undefined, method: HotRequest['method']) => boolean {
  const known = new Map<string, boolean>();
  return (version, method) => {
    const key = `${version ?? ''} ${method}`;
    let claimless = known.get(key);
    if (claimless === undefined) {
      const outcome = classifyInboundRequest({
        httpMethod: 'POST',
        ...(version === undefined ? {} : { protocolVersionHeader: version }),
        body: { jsonrpc: '2.0', id: 0, method, params: {} },
      });
      claimless = outcome.kind === 'legacy' && outcome.reason === 'no-claim';
      known.set(key, claimless);
    }
    return claimless;
  };
}

export function createFastPath<Who>(options: FastPathOptions<Who>): FastPath<Who> {
  const answer = createHotAnswerer(options.handler, options.policy);
  const isClaimless2025Request = createEraCheck();
  return (req, res, body, who) => {
    if (!passesTransportChecks(req.headers)) return undefined;
    const request = hotRequest(body);
    const version = req.headers['mcp-protocol-version'];
    const era = typeof version === 'string' ? version : undefined;
    if (request === undefined || !isClaimless2025Request(era, request.method)) return undefined;
    return answer(request, () => options.caller(who)).then((json) => {
      res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(json) });
      res.end(json);
    });
  };
}
