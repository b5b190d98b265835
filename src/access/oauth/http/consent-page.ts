/**
 * The consent page and the pages around it (DESIGN §8), rendered on the server: plain
 * HTML that works without JavaScript, with no asset from anywhere, every value escaped
 * (an app's name is the app's own claim and may hold HTML), and headers that keep the page
 * from being framed (clickjacking an Allow), cached or leaking its URL (which holds the
 * request's state) to another site. The one inline style sheet is allowed by its hash.
 *
 * The policy has no `form-action`: browsers apply it to the redirect that answers the
 * form too, and that redirect goes to the app, wherever it is.
 */

import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';

const STYLE = `
:root{color-scheme:light dark;font:16px/1.5 system-ui,sans-serif}
body{margin:0;display:flex;justify-content:center}
main{max-width:28rem;padding:2rem 1.25rem}
h1{font-size:1.4rem;line-height:1.3}
label{display:block;font-weight:600;margin-top:.75rem}
input[type=text],input[type=password]{box-sizing:border-box;width:100%;padding:.5rem;font:inherit}
.check{display:flex;gap:.5rem;align-items:center;margin-top:1rem}
.check label{margin:0}
fieldset{border:0;margin:1rem 0 0;padding:0}
legend{font-weight:600;padding:0}
fieldset .check{margin-top:.5rem}
.check label{font-weight:400}
.note{opacity:.75;font-size:.9rem}
.problem{border-left:4px solid #c62828;padding:.25rem .75rem}
.buttons{display:flex;gap:.75rem;margin-top:1.5rem}
button{font:inherit;padding:.5rem 1.5rem;cursor:pointer}
`;

const STYLE_HASH = createHash('sha256').update(STYLE, 'utf8').digest('base64');

/**
 * Every page's headers: nothing loads but the inline style; never framed or cached; the
 * page's URL (which holds the request's state) goes to no other site. `same-origin`, not
 * `no-referrer`: under no-referrer a browser sends `Origin: null` with the form, which
 * the form's Origin check must refuse.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = {
  'Content-Type': 'text/html; charset=utf-8',
  'Content-Security-Policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; base-uri 'none'; frame-ancestors 'none'`,
  'X-Frame-Options': 'DENY',
  'Cache-Control': 'no-store',
  'Referrer-Policy': 'same-origin',
};

/** Text made safe for HTML content and quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

function document(title: string, body: string, head = ''): string {
  return (
    `<!doctype html>\n<html lang="en"><head><meta charset="utf-8">` +
    `<meta name="viewport" content="width=device-width, initial-scale=1">${head}` +
    `<title>${escapeHtml(title)}</title><style>${STYLE}</style></head>` +
    `<body><main>${body}</main></body></html>\n`
  );
}

/** What the consent page shows and carries. */
export interface ConsentView {
  /** The app's name, as its registration or metadata document gives it. */
  readonly appName: string;
  /** Where the browser goes afterwards, as people read it (the redirect URI's host). */
  readonly returnsTo: string;
  /** True when the app asks for memory:write. */
  readonly asksToWrite: boolean;
  /** The user a session cookie signs in; undefined: the page asks for a user and password. */
  readonly signedInAs: string | undefined;
  /** The link that shows the sign-in fields instead of the session's user. */
  readonly otherAccountHref: string;
  /** The authorization request, carried by the form to be checked again. */
  readonly hidden: readonly (readonly [string, string])[];
  /** What went wrong with the last submission, said to the person. */
  readonly problem?: string;
  /** The user name typed last time, kept after a wrong password. */
  readonly user?: string;
}

/** The field that says how the form signs in: the session's user, or the user and password typed. */
export const SIGN_IN_FIELD = 'sign_in';

export function renderConsentPage(view: ConsentView): string {
  const app = escapeHtml(view.appName);
  const asks = view.asksToWrite ? 'read and change your memory' : 'read your memory';
  const hidden = [...view.hidden, [SIGN_IN_FIELD, view.signedInAs === undefined ? 'password' : 'session'] as const]
    .map(([name, value]) => `<input type="hidden" name="${escapeHtml(name)}" value="${escapeHtml(value)}">`)
    .join('');
  const signIn =
    view.signedInAs === undefined
      ? `<label for="user">User</label>` +
        `<input type="text" id="user" name="user" autocomplete="username" autocapitalize="none" spellcheck="false" required value="${escapeHtml(view.user ?? '')}">` +
        `<label for="password">Password</label>` +
        `<input type="password" id="password" name="password" autocomplete="current-password" required>`
      : `<p>Signed in as <strong>${escapeHtml(view.signedInAs)}</strong>. ` +
        `<a href="${escapeHtml(view.otherAccountHref)}">Use another account</a></p>`;
  const choice = (value: string, label: string, extra = '') =>
    `<div class="check"><input type="radio" id="access_${value}" name="access" value="${value}"${extra}>` +
    `<label for="access_${value}">${label}</label></div>`;
  const readOnly = view.asksToWrite
    ? `<fieldset><legend>What may ${app} do?</legend>` +
      choice('write', 'Read and change my memory', ' checked') +
      choice('review', 'Changes need my review') +
      choice('read', 'Read only') +
      '</fieldset>' +
      `<p class="note">With review, each change ${app} makes waits, seen by no app, until you approve it on Engram’s Review page.</p>`
    : `<fieldset><legend>What may ${app} do?</legend>${choice('read', 'Read only', ' checked disabled')}</fieldset>` +
      `<p class="note">${app} asks to read only.</p>`;
  const problem = view.problem === undefined ? '' : `<p class="problem" role="alert">${escapeHtml(view.problem)}</p>`;
  return document(
    `Connect ${view.appName} to Engram`,
    `<h1>Connect <strong>${app}</strong> to your Engram memory</h1>` +
      `<p>${app} asks to <strong>${asks}</strong>.</p>` +
      `<p>When you choose, your browser goes back to <strong>${escapeHtml(view.returnsTo)}</strong>.</p>` +
      problem +
      `<form method="post" action="authorize">${hidden}${signIn}${readOnly}` +
      `<div class="buttons"><button type="submit" name="decision" value="allow">Allow</button>` +
      `<button type="submit" name="decision" value="deny" formnovalidate>Deny</button></div></form>`,
  );
}

/** A refusal said to the person in the browser; nothing is sent to the app. */
export function renderErrorPage(title: string, message: string): string {
  return document(
    title,
    `<h1>${escapeHtml(title)}</h1><p>${escapeHtml(message)}</p>` +
      '<p class="note">Nothing was shared. Go back to the app and connect again.</p>',
  );
}

/**
 * A page that loads `href` (the page itself, marked as reloaded) as a navigation of our
 * own: the browser then sends the session cookie, which SameSite=Strict keeps off a
 * navigation that began on another site (the app's). The link is for a browser that does
 * not follow the refresh.
 */
export function renderReloadPage(href: string): string {
  const target = escapeHtml(href);
  return document(
    'Engram',
    `<p><a href="${target}">Continue to Engram</a></p>`,
    `<meta http-equiv="refresh" content="0; url=${target}">`,
  );
}

/** Sends a page with PAGE_HEADERS. */
export function sendPage(
  res: ServerResponse,
  status: number,
  html: string,
  headers: Readonly<Record<string, string | string[]>> = {},
): void {
  res.writeHead(status, { ...PAGE_HEADERS, ...headers, 'Content-Length': Buffer.byteLength(html) });
  res.end(html);
}
