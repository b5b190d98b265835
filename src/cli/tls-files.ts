/**
 * `engram serve --tls-cert FILE --tls-key FILE`: the certificate chain and private key
 * for serving https natively, read and tried before anything else starts, so a missing
 * file, a wrong format or a key that does not match its certificate is a startup error
 * that names the file, not a server that fails at its first connection.
 */

import { createSecureContext } from 'node:tls';
import { EngramError } from '../memory/model/errors.js';
import { readBounded } from './bounded-read.js';
import { UsageError } from './output.js';

export interface TlsFiles {
  /** PEM certificate chain, the server's certificate first. */
  readonly cert: Buffer;
  /** PEM private key of that certificate. */
  readonly key: Buffer;
}

/** Most bytes a PEM file is read to: a certificate chain is a few kilobytes. */
const MAX_PEM_BYTES = 1024 * 1024;

function readPem(flag: string, path: string): Buffer {
  return readBounded(path, {
    bytes: MAX_PEM_BYTES,
    what: 'a PEM file may hold',
    instead: `${flag} names a PEM file of a few kilobytes (-----BEGIN …); check the path`,
    name: `${flag} ${path}`,
    refuse: (message) => new EngramError('INVALID_CONFIG', message),
  });
}

/** Both files, or undefined when neither flag is given; one without the other is a usage error. */
export function readTlsFiles(certPath: string | undefined, keyPath: string | undefined): TlsFiles | undefined {
  if (certPath === undefined && keyPath === undefined) return undefined;
  if (certPath === undefined || keyPath === undefined) {
    throw new UsageError(
      `${certPath === undefined ? '--tls-key' : '--tls-cert'} needs ${certPath === undefined ? '--tls-cert' : '--tls-key'}: ` +
        'give both the certificate chain (PEM) and its private key (PEM) to serve https, or neither to serve http.',
    );
  }
  const files = { cert: readPem('--tls-cert', certPath), key: readPem('--tls-key', keyPath) };
  try {
    createSecureContext(files);
  } catch (error) {
    throw new EngramError(
      'INVALID_CONFIG',
      `cannot serve https with --tls-cert ${certPath} and --tls-key ${keyPath}: ${(error as Error).message} ` +
        '(both must be PEM files: the certificate chain, and the private key that matches it).',
    );
  }
  return files;
}
