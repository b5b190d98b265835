/**
 * The in-process backend's tokens: a map by id, gone when the process ends. Each step does
 * its work synchronously, so no other step comes between its checks and its changes.
 */

import { duplicateTokenError, type TokenRecord, type TokenStore } from '../../access/tokens/port.js';

export class MemoryTokenStore implements TokenStore {
  private readonly byId = new Map<string, TokenRecord>();

  async add(token: TokenRecord): Promise<void> {
    // Refused like the SQL stores' unique columns: the id first, then the hash.
    if (this.byId.has(token.id)) throw duplicateTokenError('id');
    for (const kept of this.byId.values()) if (kept.hash === token.hash) throw duplicateTokenError('hash');
    this.byId.set(token.id, token);
  }

  async list(user?: string): Promise<TokenRecord[]> {
    return this.tokensOf(user);
  }

  async findByHash(hash: string): Promise<TokenRecord | undefined> {
    for (const token of this.byId.values()) if (token.hash === hash) return token;
    return undefined;
  }

  async revoke(id: string): Promise<boolean> {
    return this.byId.delete(id);
  }

  async revokeAllOf(user: string): Promise<number> {
    const ids = this.tokensOf(user).map((token) => token.id);
    for (const id of ids) this.byId.delete(id);
    return ids.length;
  }

  /** The tokens of `user` (everyone's when omitted). */
  private tokensOf(user?: string): TokenRecord[] {
    const all = [...this.byId.values()];
    return user === undefined ? all : all.filter((token) => token.user === user);
  }

  get size(): number {
    return this.byId.size;
  }

  /** Puts `tokens` in place of every token kept; two with one id or one hash are refused, changing nothing. */
  replaceAll(tokens: readonly TokenRecord[]): void {
    const byId = new Map(tokens.map((token) => [token.id, token]));
    if (byId.size !== tokens.length) throw duplicateTokenError('id');
    if (new Set(tokens.map((token) => token.hash)).size !== tokens.length) throw duplicateTokenError('hash');
    this.byId.clear();
    for (const [id, token] of byId) this.byId.set(id, token);
  }

  async setReview(id: string, review: boolean): Promise<boolean> {
    const token = this.byId.get(id);
    if (token) this.byId.set(id, { ...token, review });
    return token !== undefined;
  }

  async touch(id: string, at: number): Promise<void> {
    const token = this.byId.get(id);
    if (token) this.byId.set(id, { ...token, lastUsed: at });
  }
}
