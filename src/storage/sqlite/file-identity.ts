/**
 * Is the file at the database's path still the file this connection has open? If it was
 * removed (or replaced by a rename or a copy), SQLite keeps writing into the open, unlinked
 * file: every such write would be acknowledged, then lost at the next start. So the store
 * remembers the file's identity (device and inode) when it opens it and checks it, with one
 * cheap stat, before every write transaction.
 */

import { type BigIntStats, statSync } from 'node:fs';
import { replacedError } from './errors.js';

export class FileIdentity {
  private readonly opened: BigIntStats | undefined;
  private warned = false;

  /**
   * `path` was just opened by the connection; `:memory:` and other nameless databases have
   * no file to lose. `onWarning` hears, once, that the file was removed or replaced.
   */
  constructor(
    private readonly path: string,
    private readonly onWarning: ((message: string) => void) | undefined,
  ) {
    this.opened = path === ':memory:' || path === '' ? undefined : statSync(path, { bigint: true });
  }

  /** The opened file's device and inode; undefined for a database with no file. */
  get identity(): { readonly dev: bigint; readonly ino: bigint } | undefined {
    return this.opened && { dev: this.opened.dev, ino: this.opened.ino };
  }

  /** Throws STORE_REPLACED when the path no longer names the file that was opened. */
  check(): void {
    if (!this.opened) return;
    const now = statSync(this.path, { bigint: true, throwIfNoEntry: false });
    if (now && now.dev === this.opened.dev && now.ino === this.opened.ino) return;
    const error = replacedError(this.path);
    if (!this.warned) {
      this.warned = true;
      this.onWarning?.(error.message);
    }
    throw error;
  }
}
