/**
 * Headers every answer carries, whoever writes it (the routes here, the MCP fast path,
 * the MCP SDK, Node itself for a request it cannot read): `X-Content-Type-Options: nosniff`, so no browser reads an answer as a
 * type other than the one it says; and `Connection: close` when the client asked to
 * close, which Node does by itself unless a handler sets the header, as the SDK does on
 * its event streams (`Connection: keep-alive`, which keeps the socket open); so when the
 * client asked to close, whatever a handler says, the answer says `Connection: close`.
 */

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';

/** Whether the client asked to close the connection after this answer. */
function asksToClose(req: IncomingMessage): boolean {
  const connection = req.headers.connection;
  // The common cases, without splitting a header on every request.
  if (connection === undefined) return req.httpVersion === '1.0';
  if (connection === 'keep-alive') return false;
  const options = connection
    .toLowerCase()
    .split(',')
    .map((option) => option.trim());
  return options.includes('close') || (req.httpVersion === '1.0' && !options.includes('keep-alive'));
}

/** A writeHead argument without its Connection header, when it is a header object. */
function withoutConnection(argument: unknown): unknown {
  if (typeof argument !== 'object' || argument === null || Array.isArray(argument)) return argument;
  return Object.fromEntries(Object.entries(argument).filter(([name]) => name.toLowerCase() !== 'connection'));
}

/** Call first thing for every request, before anything is written. */
export function applyAnswerHeaders(req: IncomingMessage, res: ServerResponse): void {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  if (!asksToClose(req)) return;
  const writeHead = res.writeHead;
  res.writeHead = function (this: ServerResponse, ...args: unknown[]) {
    this.setHeader('Connection', 'close');
    return (writeHead as (...all: unknown[]) => ServerResponse).apply(this, args.map(withoutConnection));
  } as ServerResponse['writeHead'];
}

const CLIENT_ERROR_STATUS: Readonly<Record<string, string>> = {
  HPE_HEADER_OVERFLOW: '431 Request Header Fields Too Large',
  HPE_CHUNK_EXTENSIONS_OVERFLOW: '413 Payload Too Large',
  ERR_HTTP_REQUEST_TIMEOUT: '408 Request Timeout',
};

/**
 * The server's `clientError` handler, for a request Node could not read (malformed, too
 * slow, headers too large): Node's own answer, with the nosniff header added.
 */
export function answerClientError(error: NodeJS.ErrnoException, socket: Duplex): void {
  // As Node does: answer only if no answer has begun on this socket (Node's own field).
  const inFlight = (socket as Duplex & { _httpMessage?: ServerResponse | null })._httpMessage;
  if (socket.writable && !inFlight?.headersSent) {
    const status = CLIENT_ERROR_STATUS[error.code ?? ''] ?? '400 Bad Request';
    socket.write(`HTTP/1.1 ${status}\r\nConnection: close\r\nX-Content-Type-Options: nosniff\r\n\r\n`);
  }
  socket.destroy(error);
}
