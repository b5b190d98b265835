/**
 * Which refusals are store errors, counted by code in /metrics (engram_store_errors_total):
 * apart from metrics.ts so that the app, which counts them, loads no prom-client while metrics are off.
 */

export function isStoreError(code: string | undefined): code is `STORE_${string}` {
  return code?.startsWith('STORE_') ?? false;
}
