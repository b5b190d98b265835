/**
 * `engram serve --tls-cert FILE --tls-key FILE`: the certificate chain and private key
 * for serving https natively, read and tried before anything else starts, so a missing
 * file, a wrong format or a key that does not match its certificate is a startup error
 * that names the file, not a server that fails at its first connection.
 */

import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { EngramError } from '../core/errors.js';
import { UsageError } from './output.js';

export interface TlsFiles {
  /** PEM certificate chain, the server's certificate first. */
  readonly cert: Buffer;
  /** PEM private key of that certificate. */
  readonly key: Buffer;
}

function readPem(flag: string, path: string): Buffer {
  try {
    return readFileSync(path);
  } catch (error) {
    throw new EngramError('INVALID_CONFIG', `cannot read ${flag} ${path}: ${(error as Error).message}`);
  }
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
