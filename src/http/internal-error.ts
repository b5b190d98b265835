/**
 * What a request that failed unexpectedly gets, on `/mcp` and `/api` alike: the stack goes
 * to the log; the client gets a 500 in its endpoint's error format, or a cut connection
 * when the answer had already begun (a half-sent body must not look complete).
 */

import type { ServerResponse } from 'node:http';

const INTERNAL_ERROR_MESSAGE =
  'Internal error: the server failed to answer. Try again; if it fails again, tell its owner.';

/** `send500` writes the endpoint's own 500 answer carrying `message`. */
export function answerInternalError(
  res: ServerResponse,
  error: unknown,
  log: (line: string) => void,
  send500: (message: string) => void,
): void {
  if (res.destroyed) return;
  log(`internal error: ${error instanceof Error ? error.stack : String(error)}`);
  if (res.headersSent) res.destroy();
  else send500(INTERNAL_ERROR_MESSAGE);
}
