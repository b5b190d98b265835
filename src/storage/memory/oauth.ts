/**
 * The in-process backend's OAuth clients, grants and their secrets: maps, gone when the
 * process ends. Each step does its work synchronously, so no other step comes between its
 * checks and its changes: a grant is kept only while its user has an account.
 */

import type {
  ClientRecord,
  ExpiredRemoval,
  GrantRecord,
  GrantSecretRecord,
  OAuthStore,
  Redemption,
} from '../../access/oauth/port.js';
import { duplicateKeyError } from '../../access/port.js';

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export class MemoryOAuthStore implements OAuthStore {
  private readonly clients = new Map<string, ClientRecord>();
  /** When each client's consent page was last shown, by client id. */
  private readonly shown = new Map<string, number>();
  private readonly grants = new Map<string, GrantRecord>();
  /** Secrets by hash. */
  private readonly secrets = new Map<string, GrantSecretRecord>();

  /** `hasAccount` answers at once whether a user has an account (the accounts store beside this one). */
  constructor(private readonly hasAccount: (user: string) => boolean) {}

  get size(): number {
    return this.clients.size + this.grants.size;
  }

  async saveClient(client: ClientRecord): Promise<void> {
    if (this.clients.has(client.id)) throw duplicateKeyError('client');
    this.clients.set(client.id, client);
  }

  async findClient(id: string): Promise<ClientRecord | undefined> {
    return this.clients.get(id);
  }

  async countClients(): Promise<number> {
    return this.clients.size;
  }

  async markClientShown(id: string, at: number): Promise<void> {
    if (this.clients.has(id)) this.shown.set(id, at);
  }

  async removeUnusedClients(registeredBefore: number, shownBefore: number): Promise<number> {
    const unused = this.unusedClients(shownBefore).filter((client) => client.created < registeredBefore);
    for (const client of unused) this.removeClient(client.id);
    return unused.length;
  }

  async removeOldestUnusedClients(count: number, shownBefore: number): Promise<number> {
    const oldest = this.unusedClients(shownBefore)
      .sort((a, b) => a.created - b.created || byCodePoint(a.id, b.id))
      .slice(0, Math.max(0, count));
    for (const client of oldest) this.removeClient(client.id);
    return oldest.length;
  }

  /** The clients no grant names and whose consent page was not shown since `shownBefore`. */
  private unusedClients(shownBefore: number): ClientRecord[] {
    const named = new Set([...this.grants.values()].map((grant) => grant.clientId));
    return [...this.clients.values()].filter(
      (client) => !named.has(client.id) && (this.shown.get(client.id) ?? Number.NEGATIVE_INFINITY) < shownBefore,
    );
  }

  private removeClient(id: string): void {
    this.clients.delete(id);
    this.shown.delete(id);
  }

  async saveGrant(grant: GrantRecord, code: GrantSecretRecord): Promise<boolean> {
    if (!this.hasAccount(grant.user)) return false;
    if (this.grants.has(grant.id) || this.secrets.has(code.hash)) throw duplicateKeyError('grant');
    this.grants.set(grant.id, grant);
    this.secrets.set(code.hash, code);
    return true;
  }

  async findGrant(id: string): Promise<GrantRecord | undefined> {
    return this.grants.get(id);
  }

  async listGrants(): Promise<GrantRecord[]> {
    return [...this.grants.values()].sort((a, b) => a.created - b.created || byCodePoint(a.id, b.id));
  }

  async touchGrant(id: string, at: number): Promise<void> {
    const grant = this.grants.get(id);
    if (grant) this.grants.set(id, { ...grant, lastUsed: at });
  }

  async setGrantReview(id: string, review: boolean): Promise<boolean> {
    const grant = this.grants.get(id);
    if (grant) this.grants.set(id, { ...grant, review });
    return grant !== undefined;
  }

  async revokeByGrantId(id: string): Promise<boolean> {
    return this.revokeGrant(id);
  }

  async revokeByUser(user: string): Promise<number> {
    let revoked = 0;
    for (const grant of [...this.grants.values()]) {
      if (grant.user === user) revoked += Number(this.revokeGrant(grant.id));
    }
    return revoked;
  }

  /** Deletes the grant `id` and its secrets; false when no such grant. */
  private revokeGrant(id: string): boolean {
    for (const [hash, secret] of this.secrets) if (secret.grantId === id) this.secrets.delete(hash);
    return this.grants.delete(id);
  }

  async saveSecrets(grantId: string, secrets: readonly GrantSecretRecord[]): Promise<boolean> {
    if (!this.grants.has(grantId)) return false;
    if (secrets.some((secret) => this.secrets.has(secret.hash))) throw duplicateKeyError('grant');
    for (const secret of secrets) this.secrets.set(secret.hash, secret);
    return true;
  }

  async findSecret(hash: string): Promise<GrantSecretRecord | undefined> {
    return this.secrets.get(hash);
  }

  async consume(hash: string, at: number): Promise<Redemption | undefined> {
    const secret = this.secrets.get(hash);
    if (!secret) return undefined;
    if (secret.used !== undefined) return { secret, first: false };
    const used = { ...secret, used: at };
    this.secrets.set(hash, used);
    return { secret: used, first: true };
  }

  async removeExpired(now: number): Promise<ExpiredRemoval> {
    let secrets = 0;
    const holding = new Set<string>();
    for (const [hash, secret] of this.secrets) {
      if (secret.expires <= now) secrets += Number(this.secrets.delete(hash));
      else holding.add(secret.grantId);
    }
    let grants = 0;
    for (const id of this.grants.keys()) if (!holding.has(id)) grants += Number(this.grants.delete(id));
    return { secrets, grants };
  }

  /** What dump() copies: every client, grant and secret, in the dump's order. */
  snapshot(): { clients: ClientRecord[]; grants: GrantRecord[]; grantSecrets: GrantSecretRecord[] } {
    return {
      clients: [...this.clients.values()].sort((a, b) => a.created - b.created || byCodePoint(a.id, b.id)),
      grants: [...this.grants.values()].sort((a, b) => a.created - b.created || byCodePoint(a.id, b.id)),
      grantSecrets: [...this.secrets.values()].sort(
        (a, b) => byCodePoint(a.grantId, b.grantId) || byCodePoint(a.hash, b.hash),
      ),
    };
  }

  /** Puts the dump's clients, grants and secrets in place of everything kept (load). */
  replaceAll(dump: {
    readonly clients: readonly ClientRecord[];
    readonly grants: readonly GrantRecord[];
    readonly grantSecrets: readonly GrantSecretRecord[];
  }): void {
    this.clients.clear();
    this.grants.clear();
    this.secrets.clear();
    for (const client of dump.clients) this.clients.set(client.id, client);
    for (const grant of dump.grants) this.grants.set(grant.id, grant);
    for (const secret of dump.grantSecrets) this.secrets.set(secret.hash, secret);
  }
}
