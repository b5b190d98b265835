/**
 * Writes held for review, end to end, on SQLite and on PostgreSQL (skipped, with a notice,
 * where no server is available): a model over MCP stdio (`engram stdio --review`, the
 * built CLI as a child process) and over HTTP with a review-mode token (`engram token
 * create --review`, then `engram serve --auth token`) is answered that its change was saved
 * for review; nothing of it is visible to memory_open until approved; the person approves
 * and rejects with `engram review` and through REST; an approval after another change to
 * the text it replaces is a conflict that changes nothing; and the review-mode token itself
 * can approve nothing.
 */

import { describe, expect, it, onTestFinished } from 'vitest';
import { main } from '../../src/cli/program.js';
import { runInProcess, serveInProcess } from '../cli/fixtures.js';
import { postgresBackend, SQLITE_BACKEND, type TestBackend } from '../helpers/backends.js';
import { childEnv, tempDir } from '../helpers/engram.js';
import { MCP_CLIENTS } from '../helpers/mcp-clients.js';
import { findTestPostgres } from '../helpers/postgres.js';
import { api } from '../http/api-client.js';
import { HTTP_CLIENTS } from '../http/clients.js';

const postgres = await findTestPostgres();
const BACKENDS: readonly TestBackend[] = [SQLITE_BACKEND, ...(postgres ? [postgresBackend(postgres)] : [])];

const HELD = "Saved for the user's review, not applied yet (the user approves or rejects it; do not call again): ";

/** A fresh database of `backend`, and `engram` run in this process on it. */
async function setup(backend: TestBackend) {
  const dir = tempDir();
  const database = await backend.create(dir);
  const env = childEnv(dir.path);
  const engram = async (...args: string[]) => {
    const run = await runInProcess([...args, ...database.args], env);
    return { ...run, json: run.code === 0 && args.includes('--json') ? JSON.parse(run.stdout) : undefined };
  };
  return { dir, database, env, engram };
}

describe.each(BACKENDS)('review mode on $label', (backend) => {
  it('over stdio: held and invisible; approved, refused as a conflict and rejected with engram review', async () => {
    const { dir, database, engram } = await setup(backend);
    expect((await engram('write', 'topics/editor', '-d', 'Editor', '--new', 'Uses Helix.')).code).toBe(0);
    const session = await MCP_CLIENTS[0]!.connect({
      database: database.args,
      configHome: dir.path,
      clientName: 'Claude',
      flags: ['--review'],
    });
    onTestFinished(() => session.close());

    expect(await session.call('memory_write', { name: 'topics/tea', description: 'Tea', new: 'Green.' })).toEqual({
      text: `${HELD}topics/tea (7 bytes): Tea`,
      isError: false,
    });
    expect(await session.call('memory_write', { name: 'topics/editor', old: 'Helix', new: 'Kakoune' })).toEqual({
      text: `${HELD}topics/editor (14 bytes): Editor`,
      isError: false,
    });
    expect(await session.call('memory_open')).toEqual({ text: 'topics/editor (12 bytes): Editor', isError: false });
    expect((await session.call('memory_open', { names: ['topics/tea'] })).isError).toBe(true);

    const listed = await engram('review', 'list', '--json');
    expect(listed.json.map((item: { operation: string; actor: string }) => [item.operation, item.actor])).toEqual([
      ['create', 'Claude'],
      ['replace', 'Claude'],
    ]);
    const [create, replace] = listed.json as { id: string }[];

    const approved = await engram('review', 'approve', create!.id);
    expect(approved).toMatchObject({
      code: 0,
      stdout: `Approved ${create!.id} by Claude: topics/tea (7 bytes): Tea\n`,
    });
    expect((await session.call('memory_open', { names: ['topics/tea'] })).text).toContain('Green.');
    const history = await engram('history', 'topics/tea', '--json');
    expect(history.json.at(-1)).toMatchObject({ actor: 'Claude (approved by local via cli)' });

    await engram('write', 'topics/editor', '--old', 'Helix', '--new', 'Vim');
    const shown = await engram('review', 'show', replace!.id);
    expect(shown.stdout).toContain('CONFLICT: the text it replaces or removes is no longer in the entry');
    expect(shown.stdout).toContain('+Uses Kakoune.');
    const conflict = await engram('review', 'approve', replace!.id);
    expect(conflict.code).toBe(1);
    expect(conflict.stderr).toContain(`Proposal ${replace!.id} (topics/editor) no longer applies`);
    expect(conflict.stderr).toContain(`engram review reject ${replace!.id}`);
    expect((await engram('open', 'topics/editor')).stdout).toContain('Uses Vim.');

    expect((await engram('review', 'reject', replace!.id)).code).toBe(0);
    expect((await engram('review', 'list')).stdout).toBe('No changes are waiting for review.\n');
  });

  it('over HTTP with a review-mode token: held and invisible; approved and rejected through REST, never by that token', async () => {
    const { env, database, engram } = await setup(backend);
    const reviewed = await engram('token', 'create', '--review', '--label', 'Claude', '--json');
    const script = await engram('token', 'create', '--label', 'script', '--json');
    expect(reviewed.json).toMatchObject({ review: true, readOnly: false });
    const served = serveInProcess(main, ['--json', '--port', '0', '--auth', 'token', ...database.args], env);
    onTestFinished(async () => {
      served.stop('SIGTERM');
      await served.exited;
    });
    const url = await served.listening;
    const port = Number(new URL(url).port);
    const session = await HTTP_CLIENTS[0]!.connect(url, { token: reviewed.json.token });
    onTestFinished(() => session.close());

    expect(await session.call('memory_write', { name: 'topics/tea', description: 'Tea', new: 'Green.' })).toEqual({
      text: `${HELD}topics/tea (7 bytes): Tea`,
      isError: false,
    });
    await session.call('memory_write', { name: 'topics/coffee', description: 'Coffee', new: 'None.' });
    expect((await session.call('memory_open')).text).toMatch(/^Memory is empty\./);

    const asScript = { token: script.json.token as string };
    const listed = await api(port, 'GET', '/api/review', asScript);
    expect(listed.status).toBe(200);
    const [tea, coffee] = listed.json.proposals as { id: string; diff: string; applies: boolean }[];
    expect(tea).toMatchObject({ name: 'topics/tea', operation: 'create', actor: 'Claude', applies: true });
    expect(tea!.diff).toContain('+Green.');

    const byReviewed = await api(port, 'POST', `/api/review/${tea!.id}/approve`, { token: reviewed.json.token });
    expect(byReviewed.status).toBe(403);
    expect(byReviewed.json.error.message).toContain("This token's changes need the user's review");

    const approved = await api(port, 'POST', `/api/review/${tea!.id}/approve`, asScript);
    expect(approved.status).toBe(200);
    expect(approved.json).toMatchObject({ approved: tea!.id, entry: { name: 'topics/tea', body: 'Green.\n' } });
    const rejected = await api(port, 'POST', `/api/review/${coffee!.id}/reject`, asScript);
    expect(rejected.json).toEqual({ rejected: coffee!.id, name: 'topics/coffee' });
    expect((await session.call('memory_open')).text).toBe('topics/tea (7 bytes): Tea');
    expect((await api(port, 'GET', '/api/review', asScript)).json).toEqual({ proposals: [] });
    const again = await api(port, 'POST', `/api/review/${coffee!.id}/reject`, asScript);
    expect(again.status).toBe(404);
    expect(again.json.error.message).toContain('GET /api/review lists those waiting');
  });
});
