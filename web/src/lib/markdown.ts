/**
 * An entry's body as Markdown, made safe to show. Memory is written by models and may
 * hold prompt injections and HTML, so nothing in it may run, load or navigate:
 * - HTML written in the body is shown as text, never as markup (marked's html renderer
 *   escapes it);
 * - images are not loaded (no request leaves for them): each shows as its alt text and address;
 * - links keep only http(s) and mailto addresses (no javascript:, data: or relative ones),
 *   open in a new tab with rel="noopener noreferrer";
 * - DOMPurify then cleans what marked produced (a second lock), and the server's CSP
 *   (no inline script, images only from the server itself) is a third.
 */

import DOMPurify from 'dompurify';
import { Marked, type Tokens } from 'marked';

const SAFE_LINK = /^(?:https?:|mailto:)/i;

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);
}

const marked = new Marked({
  gfm: true,
  async: false,
  renderer: {
    html(token: Tokens.HTML | Tokens.Tag): string {
      return escapeHtml(token.text);
    },
    image(token: Tokens.Image): string {
      const alt = token.text === '' ? 'image' : token.text;
      return `<span class="blocked-image" title="Images in memory are not loaded">[${escapeHtml(alt)}: ${escapeHtml(token.href)}]</span>`;
    },
  },
});

const purify = DOMPurify(window);

purify.addHook('afterSanitizeAttributes', (node) => {
  if (node.tagName !== 'A') return;
  const href = node.getAttribute('href');
  if (href === null || !SAFE_LINK.test(href.trim())) node.removeAttribute('href');
  node.setAttribute('rel', 'noopener noreferrer');
  node.setAttribute('target', '_blank');
  node.setAttribute('referrerpolicy', 'no-referrer');
});

const PURIFY_OPTIONS = {
  FORBID_TAGS: [
    'img',
    'svg',
    'math',
    'style',
    'form',
    'input',
    'button',
    'textarea',
    'select',
    'iframe',
    'object',
    'embed',
    'video',
    'audio',
    'source',
    'picture',
    'link',
    'meta',
    'base',
  ],
  FORBID_ATTR: ['style', 'srcset', 'src', 'action', 'formaction', 'background', 'poster'],
  ALLOWED_URI_REGEXP: SAFE_LINK,
  ADD_ATTR: ['target'],
};

/** The body as sanitised HTML, ready for {@html}. */
export function renderMarkdown(body: string): string {
  const html = marked.parse(body) as string;
  return purify.sanitize(html, PURIFY_OPTIONS) as string;
}
