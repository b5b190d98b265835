/**
 * HTTP written by hand on a TCP socket, for what no HTTP client sends: a header twice,
 * any Host, a request that asks the server to close. Resolves once the server closes the
 * connection, so it is for requests the server must answer and then hang up on.
 */

import { connect } from 'node:net';

export interface SocketAnswer {
  /** Everything the server sent, as received. */
  readonly text: string;
  readonly status: number;
  /** Header names lower-cased; a repeated header keeps its last value. */
  readonly headers: Readonly<Record<string, string>>;
}

function parse(text: string): SocketAnswer {
  const [head = ''] = text.split('\r\n\r\n', 1);
  const [statusLine = '', ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { text, status: Number(statusLine.split(' ')[1]), headers };
}

/** Sends `request` as it is and waits for the server to close the connection. */
export function sendUntilClosed(port: number, request: string): Promise<SocketAnswer> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(request));
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      text += chunk;
    });
    socket.on('error', reject);
    socket.on('close', () => resolve(parse(text)));
  });
}

/** A request with these header lines (`Name: value`, repeats allowed) and `Connection: close`. */
export function request(method: string, path: string, headerLines: readonly string[], body = ''): string {
  const lines = [
    `${method} ${path} HTTP/1.1`,
    ...headerLines,
    ...(body === '' ? [] : [`Content-Length: ${Buffer.byteLength(body)}`]),
    'Connection: close',
  ];
  return `${lines.join('\r\n')}\r\n\r\n${body}`;
}
