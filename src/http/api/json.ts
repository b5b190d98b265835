/**
 * Every REST answer is one JSON document, never cached (memory changes): with its length
 * when it is small, or streamed as it is produced, so a large one is never held whole.
 */

import type { ServerResponse } from 'node:http';

export function sendJson(
  res: ServerResponse,
  status: number,
  value: unknown,
  headers: Record<string, string> = {},
): void {
  const body = JSON.stringify(value);
  res.writeHead(status, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(body),
    'Cache-Control': 'no-store',
  });
  res.end(body);
}

/** Resolves when `res` can take more, or has closed. */
function writable(res: ServerResponse): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      res.off('drain', done);
      res.off('close', done);
      resolve();
    };
    res.on('drain', done);
    res.on('close', done);
  });
}

/**
 * Sends JSON text piece by piece, waiting whenever the client reads slower than the
 * pieces come, and stopping (which ends the pieces' generator) if the client goes away.
 */
export async function sendJsonStream(
  res: ServerResponse,
  status: number,
  pieces: AsyncIterable<string>,
  headers: Record<string, string> = {},
): Promise<void> {
  res.writeHead(status, { ...headers, 'Content-Type': 'application/json; charset=utf-8', 'Cache-Control': 'no-store' });
  for await (const piece of pieces) {
    if (res.destroyed) return;
    if (!res.write(piece)) await writable(res);
  }
  if (!res.destroyed) res.end();
}
