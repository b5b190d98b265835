/**
 * A client of `POST /api/import` for tests of large bodies: it sends the body a MiB at a
 * time and resolves with the answer, which a server reading as it arrives may give (and
 * close the connection) before the whole body was sent.
 */

import { request } from 'node:http';

export interface ImportAnswer {
  readonly status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the test reads whatever JSON the route answers
  readonly json: any;
}

/**
 * POSTs `body` a MiB at a time, as a client on a fast link would, and resolves with the
 * answer, which may come (and the connection close) before the whole body was sent.
 */
export function postImport(port: number, body: Buffer, token?: string, path = '/api/import'): Promise<ImportAnswer> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const outgoing = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path,
        headers: {
          Host: `127.0.0.1:${port}`,
          'Content-Type': 'application/json',
          'Content-Length': body.length,
          ...(token ? { Authorization: `Bearer ${token}` } : {}),
        },
      },
      (res) => {
        answered = true;
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(Buffer.concat(chunks).toString()) }),
        );
      },
    );
    // Writing on after the server answered and closed fails; the answer is what counts.
    outgoing.on('error', (error) => setTimeout(() => answered || reject(error), 1_000));
    let offset = 0;
    const pump = () => {
      while (offset < body.length) {
        const piece = body.subarray(offset, offset + 1024 * 1024);
        offset += piece.length;
        if (!outgoing.write(piece)) {
          outgoing.once('drain', pump);
          return;
        }
      }
      outgoing.end();
    };
    pump();
  });
}
