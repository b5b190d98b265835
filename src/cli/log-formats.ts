/** The formats of `engram serve`'s log (server-log.ts), apart so that the config file's check loads no pino. */

export const LOG_FORMATS = ['human', 'json'] as const;
export type LogFormat = (typeof LOG_FORMATS)[number];
