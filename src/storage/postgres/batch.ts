/**
 * Reads of one kind that arrive while PostgreSQL is busy with others of that kind go
 * together in one statement: under load, one round trip — one statement for the server to
 * plan and run, one message each way — answers many requests; while few arrive, each is
 * sent at once, as it would be alone. A read is sent only after it was asked for, so it
 * sees every write acknowledged before it. Reads of one user's name are keyed by pairKey.
 */

/** Most keys one statement carries. */
const MOST_KEYS = 256;

/** Runs one statement for `keys` (distinct, compared as strings are) and says what each key's answer is. */
export type RunBatch<Key extends string, Answer> = (keys: readonly Key[]) => Promise<(key: Key) => Answer>;

interface Waiting<Key extends string, Answer> {
  readonly key: Key;
  readonly resolve: (answer: Answer) => void;
  readonly reject: (error: unknown) => void;
}

export class Batcher<Key extends string, Answer> {
  private waiting: Waiting<Key, Answer>[] = [];
  private running = 0;

  constructor(
    private readonly run: RunBatch<Key, Answer>,
    /** Statements of this kind at once: up to that many reads are sent alone, the rest wait and go together. */
    private readonly concurrency: number,
  ) {}

  load(key: Key): Promise<Answer> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ key, resolve, reject });
      if (this.running < this.concurrency) this.send();
    });
  }

  private send(): void {
    const batch = this.waiting.splice(0, MOST_KEYS);
    this.running++;
    this.run([...new Set(batch.map((waiting) => waiting.key))])
      .then(
        (answerOf) => {
          for (const waiting of batch) {
            try {
              waiting.resolve(answerOf(waiting.key));
            } catch (error) {
              waiting.reject(error);
            }
          }
        },
        (error: unknown) => {
          for (const waiting of batch) waiting.reject(error);
        },
      )
      .finally(() => {
        this.running--;
        if (this.waiting.length > 0 && this.running < this.concurrency) this.send();
      });
  }
}

/** A batch's key for one user's name: unambiguous whatever either holds. */
export function pairKey(user: string, name: string): string {
  return JSON.stringify([user, name]);
}

/** The users and the names of a batch's keys, pair by pair: $1 and $2 of its statement. */
export function pairs(keys: readonly string[]): [string[], string[]] {
  const decoded = keys.map((key) => JSON.parse(key) as [string, string]);
  return [decoded.map(([user]) => user), decoded.map(([, name]) => name)];
}
