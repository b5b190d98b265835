/**
 * One line per request on stderr, enough to see who did what and how it went: time,
 * user, HTTP method and path, JSON-RPC method, tool, status, duration. Never arguments
 * or bodies: memory is private, and a log is copied to places memory is not.
 */

export interface RequestRecord {
  readonly time: Date;
  readonly user: string | undefined;
  readonly httpMethod: string;
  readonly path: string;
  readonly rpcMethod: string | undefined;
  readonly tool: string | undefined;
  readonly status: number;
  readonly durationMs: number;
}

export interface RpcSummary {
  readonly rpcMethod: string | undefined;
  readonly tool: string | undefined;
}

/** Client-chosen words are shown only if they look like names, so a log line stays one line. */
function word(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  return /^[\w./:@-]{1,64}$/.test(value) ? value : '?';
}

function summarizeOne(message: unknown): RpcSummary {
  if (typeof message !== 'object' || message === null) return { rpcMethod: undefined, tool: undefined };
  const { method, params } = message as { method?: unknown; params?: { name?: unknown } };
  return { rpcMethod: word(method), tool: method === 'tools/call' ? word(params?.name) : undefined };
}

/** The JSON-RPC method(s) and tool name(s) of a parsed request body. */
export function summarizeRpc(body: unknown): RpcSummary {
  if (!Array.isArray(body)) return summarizeOne(body);
  const parts = body.map(summarizeOne);
  const join = (values: (string | undefined)[]) =>
    values.some(Boolean) ? values.map((v) => v ?? '-').join(',') : undefined;
  return { rpcMethod: join(parts.map((p) => p.rpcMethod)), tool: join(parts.map((p) => p.tool)) };
}

export function formatRequestLine(record: RequestRecord): string {
  return [
    record.time.toISOString(),
    `user=${word(record.user) ?? '-'}`,
    `${record.httpMethod} ${/^[\x21-\x7e]{1,100}$/.test(record.path) ? record.path : '?'}`,
    `method=${record.rpcMethod ?? '-'}`,
    `tool=${record.tool ?? '-'}`,
    `status=${record.status}`,
    `${Math.round(record.durationMs)}ms`,
  ].join(' ');
}
