/**
 * What a request may cost the server: the body is capped (a larger one is refused as
 * soon as it is known to be too large, never read to the end), and slow or hung
 * clients are cut off by the timeouts server.ts applies.
 */

import type { IncomingMessage } from 'node:http';

/** Largest request body read, in bytes. */
export const MAX_BODY_BYTES = 1024 * 1024;

export interface Timeouts {
  /** Time allowed to receive the request headers. */
  readonly headersMs: number;
  /** Time allowed to receive the whole request. */
  readonly requestMs: number;
  /** How long an idle keep-alive connection stays open. */
  readonly keepAliveMs: number;
  /** How often unfinished requests are checked against those limits. */
  readonly checkIntervalMs: number;
}

export const DEFAULT_TIMEOUTS: Timeouts = {
  headersMs: 10_000,
  requestMs: 30_000,
  keepAliveMs: 5_000,
  checkIntervalMs: 1_000,
};

export type BodyRead = { readonly kind: 'read'; readonly text: string } | { readonly kind: 'too-large' };

/** True when the declared Content-Length already exceeds the cap. */
export function declaredTooLarge(req: IncomingMessage, maxBytes: number): boolean {
  const declared = Number(req.headers['content-length']);
  return Number.isFinite(declared) && declared > maxBytes;
}

/**
 * The body at once, when all its declared bytes already wait in the stream's buffer (a
 * small request comes in one packet with its headers, and is parsed whole before any
 * awaited step of its handler runs): the same text readBody gives, without its promise,
 * listeners and chunk list. The stream is then resumed, to end as a read one does.
 * Undefined when the body has no declared length, is still to come, is too large or is
 * being read: then readBody.
 */
export function bufferedBody(req: IncomingMessage, maxBytes: number): BodyRead | undefined {
  const declared = Number(req.headers['content-length']);
  if (!(declared > 0 && declared <= maxBytes) || req.readableLength !== declared || req.readableFlowing !== null) {
    return undefined;
  }
  const whole = req.read() as Buffer;
  req.resume();
  return { kind: 'read', text: whole.toString('utf8') };
}

/**
 * Reads the body as UTF-8. Past `maxBytes` it stops reading and leaves the rest unread
 * (the stream is paused, not destroyed, so the refusal can still be sent).
 */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<BodyRead> {
  if (declaredTooLarge(req, maxBytes)) return Promise.resolve({ kind: 'too-large' });
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer) => {
      received += chunk.byteLength;
      if (received <= maxBytes) {
        chunks.push(chunk);
        return;
      }
      stop();
      req.pause();
      resolve({ kind: 'too-large' });
    };
    const onEnd = () => {
      stop();
      resolve({ kind: 'read', text: Buffer.concat(chunks).toString('utf8') });
    };
    const onError = (error: Error) => {
      stop();
      reject(error);
    };
    const onClose = () => onError(new Error('the client closed the connection before sending the whole body'));
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
