/** The part of autocannon's API the load generator uses (the package ships no types). */
declare module 'autocannon' {
  interface Options {
    url: string;
    method: string;
    headers: Record<string, string>;
    requests: { body: string }[];
    connections: number;
    workers: number;
    /** Seconds. */
    duration: number;
    /** In workers mode, the path of a CommonJS file exporting `(body: string) => boolean`. */
    verifyBody: string;
    /** In workers mode, the path of a CommonJS file exporting `(client) => void`, called for each connection. */
    setupClient: string;
  }
  interface Histogram {
    readonly average: number;
    readonly p50: number;
    readonly p99: number;
    readonly total: number;
  }
  interface Result {
    /** Seconds. */
    readonly duration: number;
    readonly requests: Histogram;
    readonly latency: Histogram;
    readonly errors: number;
    readonly timeouts: number;
    readonly non2xx: number;
    readonly mismatches: number;
  }
  export default function autocannon(options: Options): Promise<Result>;
}
