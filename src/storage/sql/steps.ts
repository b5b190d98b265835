/**
 * Work of more than one statement, written once for both SQL backends: a generator that
 * yields each statement it needs and is handed back the statement's result. SQLite's
 * driver is synchronous and runs the steps to the end inside one transaction without
 * giving the event loop a turn; PostgreSQL's awaits each statement on the connection
 * holding the transaction. The same steps, so one algorithm, in either.
 */

import type { SqlStatement } from './database.js';

/** One statement the steps ask for, with what they want of it: its rows, or how many rows it changed. */
export interface SqlCall {
  readonly want: 'rows' | 'changes';
  readonly statement: SqlStatement;
  readonly params: readonly unknown[];
}

/** Steps that end with a T. */
export type Steps<T> = Generator<SqlCall, T, unknown>;

/** The rows the statement returns. */
export function* rows<Row>(statement: SqlStatement, ...params: unknown[]): Steps<Row[]> {
  return (yield { want: 'rows', statement, params }) as Row[];
}

/** The first row the statement returns, if any. */
export function* first<Row>(statement: SqlStatement, ...params: unknown[]): Steps<Row | undefined> {
  return (yield* rows<Row>(statement, ...params))[0];
}

/** How many rows the statement inserted, changed or deleted. */
export function* changes(statement: SqlStatement, ...params: unknown[]): Steps<number> {
  return (yield { want: 'changes', statement, params }) as number;
}

/** Runs `steps` to their end with a synchronous driver. */
export function runSteps<T>(steps: Steps<T>, perform: (call: SqlCall) => unknown): T {
  let next = steps.next();
  while (!next.done) next = steps.next(perform(next.value));
  return next.value;
}

/** Runs `steps` to their end with an asynchronous driver, one statement at a time. */
export async function runStepsAsync<T>(steps: Steps<T>, perform: (call: SqlCall) => Promise<unknown>): Promise<T> {
  let next = steps.next();
  while (!next.done) next = steps.next(await perform(next.value));
  return next.value;
}
