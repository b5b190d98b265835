/**
 * How the storage engine's algorithms run on any backend: each is written once, as a
 * generator (sans-IO) that asks its backend's primitives (primitives.ts) for every read
 * and write and yields what they return — a value, or a promise of one. A synchronous
 * backend (SQLite through better-sqlite3, whose transactions cannot span an await; the
 * in-process store) drives it with `runSync`, so the whole algorithm runs inside its
 * synchronous transaction; an asynchronous one (PostgreSQL through pg) drives it with
 * `runAsync`, awaiting each step on its transaction's connection.
 *
 * Why a generator rather than two copies of each algorithm, or an async engine: SQLite
 * cannot await inside a transaction (an async engine would end its synchronous
 * transactions and group commit), and writing the steps twice, sync and async, is the
 * duplication the engine exists to end. What it costs, measured: a write driven by
 * runSync over primitives that do nothing takes ~4.4 µs against ~1.1 µs for the same
 * calls made directly, so ~3 µs of a SQLite write's ~300 µs of CPU (about 1%). Durable
 * writes through the stores, interleaved call by call with the stores before the engine
 * (1,000 entries, 1,000 rounds, medians): SQLite append 1.04x, replace 1.02x, drop and
 * undrop 1.05x; PostgreSQL append 1.01x, replace 1.04x, drop and undrop 1.06x (these
 * also read each body through its revision now: sql-rows.ts, bodyOf).
 */

/** What a primitive returns: at once (SQLite, in-process) or later (PostgreSQL). */
export type Maybe<T> = T | Promise<T>;

/** An algorithm of the engine: a generator of its primitives' results, returning T. */
export type Work<T> = Generator<unknown, T, unknown>;

/** Hands a primitive's result to the driver and resumes with its value: `const id = yield* get(p.insertEntry(…))`. */
export function* get<T>(result: Maybe<T>): Generator<Maybe<T>, T, unknown> {
  return (yield result) as T;
}

/** Runs `work` to its end on a synchronous backend, inside the caller's transaction. */
export function runSync<T>(work: Work<T>): T {
  let step = work.next();
  while (!step.done) {
    if (step.value instanceof Promise) {
      throw new Error('a synchronous storage backend returned a promise from one of its primitives');
    }
    step = work.next(step.value);
  }
  return step.value;
}

/** Runs `work` to its end on an asynchronous backend, awaiting each primitive; a rejection is thrown at its step. */
export async function runAsync<T>(work: Work<T>): Promise<T> {
  let step = work.next();
  while (!step.done) {
    let value: unknown;
    try {
      value = await step.value;
    } catch (error) {
      step = work.throw(error);
      continue;
    }
    step = work.next(value);
  }
  return step.value;
}

/**
 * Runs `work` on a synchronous backend in turns: the event loop runs between two of its
 * steps, so a long algorithm (loading a whole dump) does not hold up a server's requests.
 * Only on a connection nothing else uses while it runs: a request's statement there would
 * land inside the caller's open transaction.
 */
export async function runInTurns<T>(work: Work<T>): Promise<T> {
  let step = work.next();
  while (!step.done) {
    if (step.value instanceof Promise) {
      throw new Error('a synchronous storage backend returned a promise from one of its primitives');
    }
    const value = step.value;
    await new Promise<void>((resolve) => setImmediate(resolve));
    step = work.next(value);
  }
  return step.value;
}
