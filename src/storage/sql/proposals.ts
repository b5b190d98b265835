/**
 * The proposals port (memory/port.ts ProposalStore: changes held for review) for both SQL
 * backends, in the `proposals` table of the same database as the entries. Keeping or
 * taking a proposal moves its user's change counter (`users.changes`) in the same
 * transaction, first of all — which also serialises it with the user's writes in
 * PostgreSQL (the row lock every write takes) — so that watchers in every process sharing
 * the database are told (storage/change-feed.ts), and this process's are told at once by
 * `committed`. Of two takes of one proposal, one deletes it: the other finds it gone.
 */

import type { ProposalRecord, ProposalStore } from '../../memory/port.js';
import type { SqlDatabase } from './database.js';
import { changes, first, rows } from './steps.js';

/** The columns a proposal is read and written by, in the order of ProposalRow and of proposalValues. */
export const PROPOSAL_COLUMNS =
  'user_id, id, name, operation, description, new_text, old_text, base_revision, proposed_description, proposed_body, actor, at';

export interface ProposalRow {
  user_id: string;
  id: string;
  name: string;
  operation: ProposalRecord['operation'];
  description: string | null;
  new_text: string | null;
  old_text: string | null;
  base_revision: number;
  proposed_description: string;
  proposed_body: string;
  actor: string;
  at: number;
}

export function toProposalRecord(row: ProposalRow): ProposalRecord {
  return {
    id: row.id,
    user: row.user_id,
    name: row.name,
    operation: row.operation,
    description: row.description ?? undefined,
    new: row.new_text ?? undefined,
    old: row.old_text ?? undefined,
    baseRevision: row.base_revision,
    proposedDescription: row.proposed_description,
    proposedBody: row.proposed_body,
    actor: row.actor,
    at: row.at,
  };
}

export function proposalValues(proposal: ProposalRecord): unknown[] {
  return [
    proposal.user,
    proposal.id,
    proposal.name,
    proposal.operation,
    proposal.description ?? null,
    proposal.new ?? null,
    proposal.old ?? null,
    proposal.baseRevision,
    proposal.proposedDescription,
    proposal.proposedBody,
    proposal.actor,
    proposal.at,
  ];
}

export class SqlProposalStore implements ProposalStore {
  private readonly sql;

  constructor(
    private readonly db: SqlDatabase,
    /** Told, after it committed, that the user's proposals changed (the store tells its watchers). */
    private readonly committed: (user: string) => void,
  ) {
    const prepare = (name: string, text: string) => db.prepare(`proposals_${name}`, text);
    const { byCodePoint, changeFloor } = db.dialect;
    this.sql = {
      ensureUser: prepare(
        'ensure_user',
        `INSERT INTO users (user_id, changes) VALUES (?, ${changeFloor}) ON CONFLICT (user_id) DO NOTHING`,
      ),
      moveCounter: prepare('move_counter', 'UPDATE users SET changes = changes + 1 WHERE user_id = ?'),
      deleteExpiredOf: prepare('delete_expired_of', 'DELETE FROM proposals WHERE user_id = ? AND at <= ?'),
      count: prepare('count', 'SELECT CAST(count(*) AS INTEGER) AS count FROM proposals WHERE user_id = ?'),
      add: prepare('add', `INSERT INTO proposals (${PROPOSAL_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`),
      list: prepare(
        'list',
        `SELECT ${PROPOSAL_COLUMNS} FROM proposals WHERE user_id = ? AND at > ? ORDER BY at, id${byCodePoint}`,
      ),
      find: prepare('find', `SELECT ${PROPOSAL_COLUMNS} FROM proposals WHERE user_id = ? AND id = ?`),
      take: prepare('take', `DELETE FROM proposals WHERE user_id = ? AND id = ? RETURNING ${PROPOSAL_COLUMNS}`),
      anyExpired: prepare('any_expired', 'SELECT 1 AS expired FROM proposals WHERE at <= ? LIMIT 1'),
      expire: prepare('expire', 'DELETE FROM proposals WHERE at <= ?'),
    };
  }

  async add(proposal: ProposalRecord, limit: number, expired: number): Promise<boolean> {
    const { ensureUser, moveCounter, deleteExpiredOf, count, add } = this.sql;
    const { user } = proposal;
    const kept = await this.db.transaction(function* () {
      yield* changes(ensureUser, user);
      yield* changes(moveCounter, user);
      yield* changes(deleteExpiredOf, user, expired);
      const waiting = (yield* first<{ count: number | string }>(count, user))?.count ?? 0;
      if (Number(waiting) >= limit) return false;
      yield* changes(add, ...proposalValues(proposal));
      return true;
    });
    this.committed(user);
    return kept;
  }

  async list(user: string, expired: number): Promise<ProposalRecord[]> {
    return (await this.db.rows<ProposalRow>(this.sql.list, [user, expired])).map(toProposalRecord);
  }

  async find(user: string, id: string): Promise<ProposalRecord | undefined> {
    const [row] = await this.db.rows<ProposalRow>(this.sql.find, [user, id]);
    return row && toProposalRecord(row);
  }

  async take(user: string, id: string): Promise<ProposalRecord | undefined> {
    const { ensureUser, moveCounter, take } = this.sql;
    const [row] = await this.db.transaction(function* () {
      yield* changes(ensureUser, user);
      yield* changes(moveCounter, user);
      return yield* rows<ProposalRow>(take, user, id);
    });
    this.committed(user);
    return row && toProposalRecord(row);
  }

  /**
   * Deletes the proposals expired by `cutoff`. Looked for first by a read (proposals_age):
   * every command's start expires them, and most find none, so none takes the write lock
   * for nothing, and a memory only readable (a read-only file) can still be read.
   */
  async expire(cutoff: number): Promise<number> {
    const { anyExpired, expire } = this.sql;
    if ((await this.db.rows(anyExpired, [cutoff])).length === 0) return 0;
    return this.db.transaction(() => changes(expire, cutoff));
  }
}
