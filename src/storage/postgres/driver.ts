/**
 * The slice of node-postgres the PostgreSQL store uses, as Engram's own types: the store's
 * published declarations name these, never the driver's, so a program that type-checks
 * its dependencies needs no @types/pg. Only pool.ts imports the driver; it wraps the
 * node-postgres pool in these.
 */

/** One SQL statement; a `name` makes PostgreSQL prepare it once per connection. */
export interface Statement {
  readonly name?: string;
  readonly text: string;
  readonly values?: readonly unknown[];
  /** `array`: each row read as the array of its columns, in the order of the SELECT, not as an object keyed by their names. */
  readonly rowMode?: 'array';
}

/** What runs statements: the pool itself, or one connection holding a transaction. */
export interface Queryable {
  query<Row>(statement: Statement): Promise<{ readonly rows: Row[]; readonly rowCount: number | null }>;
}

export interface Connection extends Queryable {
  /** Gives the connection back to the pool; with an error, the pool discards it instead. */
  release(error?: Error): void;
}

export interface Pool extends Queryable {
  connect(): Promise<Connection>;
  end(): Promise<void>;
}
