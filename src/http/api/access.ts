/**
 * `/api/tokens` and `/api/apps`: the caller's own static tokens and connected apps (OAuth
 * grants), listed, created, put in review mode or out of it, and revoked — the web UI's access page. Nobody sees or ends
 * another user's: an id of someone else's is answered as unknown. A new token is shown
 * once, in the answer that creates it. Only a signed-in person creates one: a token that
 * could mint tokens would outlive its own revocation in the ones it made.
 */

import type { OAuthTokens } from '../../access/oauth/tokens.js';
import type { Access } from '../../access/tokens/access.js';
import { EngramError } from '../../memory/model/errors.js';
import { jsonBody } from './request.js';
import type { Route } from './route.js';
import { appJson, tokenJson } from './shapes.js';

const NO_AUTH =
  'This server runs without authentication (--auth none): it takes no tokens and connects no apps. ' +
  'Start it with --auth token or --auth oauth to use them.';

const SIGN_IN_REQUIRED =
  'A token cannot create tokens: sign in to the web UI with your password, or ask the owner of this server ' +
  '(engram token create --user NAME).';

const CREATE_EXAMPLE = '{"label": "llama.cpp WebUI", "readOnly": false, "review": false} (all optional)';

const REVIEW_EXAMPLE = '{"review": true}';

/** The body's fields, each one of `allowed`; INVALID_ARGUMENT (from `refuse`) otherwise. */
function fieldsOf(
  text: string,
  example: string,
  allowed: readonly string[],
  refuse: (what: string) => EngramError,
): Record<string, unknown> {
  const body = jsonBody(text, example);
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    throw refuse('the request body is not an object');
  const fields = body as Record<string, unknown>;
  for (const key of Object.keys(fields)) {
    if (!allowed.includes(key)) throw refuse(`"${key}" is not a field of this request`);
  }
  for (const key of ['readOnly', 'review']) {
    if (fields[key] !== undefined && typeof fields[key] !== 'boolean') throw refuse(`"${key}" must be true or false`);
  }
  return fields;
}

/** `{label?, readOnly?, review?}`, checked; INVALID_ARGUMENT otherwise. */
function newTokenOf(text: string): { label?: string; readOnly: boolean; review: boolean } {
  const refuse = (what: string) =>
    new EngramError('INVALID_ARGUMENT', `${what}: send ${CREATE_EXAMPLE}; no token was created.`);
  const fields = fieldsOf(text, CREATE_EXAMPLE, ['label', 'readOnly', 'review'], refuse);
  if (fields.label !== undefined && typeof fields.label !== 'string') throw refuse('"label" must be a string');
  return {
    ...(fields.label === undefined ? {} : { label: fields.label }),
    readOnly: fields.readOnly === true,
    review: fields.review === true,
  };
}

/** `{review}`, checked; INVALID_ARGUMENT otherwise. */
function reviewOf(text: string): boolean {
  const refuse = (what: string) =>
    new EngramError('INVALID_ARGUMENT', `${what}: send ${REVIEW_EXAMPLE} or {"review": false}; nothing was changed.`);
  const fields = fieldsOf(text, REVIEW_EXAMPLE, ['review'], refuse);
  if (fields.review === undefined) throw refuse('"review" is missing');
  return fields.review === true;
}

export function accessRoutes(
  access: Access | undefined,
  apps: Pick<OAuthTokens, 'listAppsOf' | 'revokeAppOf' | 'setAppReviewOf'> | undefined,
): Route[] {
  const tokens = () => {
    if (access === undefined) throw new EngramError('INVALID_ARGUMENT', NO_AUTH);
    return access;
  };
  const missingApp = (id: string) =>
    new EngramError(
      'NOT_FOUND',
      `you have no connected app with the id ${JSON.stringify(id)}. GET /api/apps lists yours.`,
    );
  return [
    {
      method: 'GET',
      template: '/api/tokens',
      handle: async ({ caller }) => ({ body: { tokens: (await tokens().listOf(caller.user)).map(tokenJson) } }),
    },
    {
      method: 'POST',
      template: '/api/tokens',
      body: 'json',
      handle: async ({ caller, body, bearer }) => {
        const service = tokens();
        if (bearer) return { status: 403, body: { error: { code: 'SIGN_IN_REQUIRED', message: SIGN_IN_REQUIRED } } };
        const request = newTokenOf(body);
        const issued = await service.create({ user: caller.user, ...request });
        return { status: 201, body: { token: tokenJson(issued.info), secret: issued.token } };
      },
    },
    {
      method: 'PUT',
      template: '/api/tokens/{id}',
      body: 'json',
      handle: async ({ caller, id, body }) => ({
        body: { token: tokenJson(await tokens().setReviewOf(caller.user, id, reviewOf(body))) },
      }),
    },
    {
      method: 'DELETE',
      template: '/api/tokens/{id}',
      handle: async ({ caller, id }) => {
        await tokens().revokeOf(caller.user, id);
        return { body: { revoked: id } };
      },
    },
    {
      method: 'GET',
      template: '/api/apps',
      handle: async ({ caller }) => {
        tokens();
        return { body: { apps: apps === undefined ? [] : (await apps.listAppsOf(caller.user)).map(appJson) } };
      },
    },
    {
      method: 'PUT',
      template: '/api/apps/{id}',
      body: 'json',
      handle: async ({ caller, id, body }) => {
        tokens();
        const review = reviewOf(body);
        if (apps === undefined || !(await apps.setAppReviewOf(caller.user, id, review))) throw missingApp(id);
        const app = (await apps.listAppsOf(caller.user)).find((candidate) => candidate.id === id.trim());
        if (app === undefined) throw missingApp(id);
        return { body: { app: appJson(app) } };
      },
    },
    {
      method: 'DELETE',
      template: '/api/apps/{id}',
      handle: async ({ caller, id }) => {
        tokens();
        if (apps === undefined || !(await apps.revokeAppOf(caller.user, id))) throw missingApp(id);
        return { body: { revoked: id } };
      },
    },
  ];
}
