// @vitest-environment jsdom
// An entry's body as the web UI shows it (web/src/lib/markdown.ts): Markdown rendered, and
// nothing in it that could run, load or navigate. DOMPurify needs a DOM: jsdom's (under
// happy-dom's, DOMPurify stripped headings and kept javascript: links).
import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '../../web/src/lib/markdown';

/** The rendered HTML, parsed, to ask about its elements. */
function rendered(body: string): HTMLElement {
  const holder = document.createElement('div');
  holder.innerHTML = renderMarkdown(body);
  return holder;
}

describe('renderMarkdown', () => {
  it('renders Markdown: headings, emphasis, lists, code, tables', () => {
    const html = rendered('# Title\n\n*a* **b**\n\n- one\n- two\n\n`x`\n\n| h |\n|---|\n| c |');
    expect(html.querySelector('h1')?.textContent).toBe('Title');
    expect(html.querySelector('em')?.textContent).toBe('a');
    expect(html.querySelector('strong')?.textContent).toBe('b');
    expect(html.querySelectorAll('li')).toHaveLength(2);
    expect(html.querySelector('code')?.textContent).toBe('x');
    expect(html.querySelector('td')?.textContent).toBe('c');
  });

  it('shows HTML written in the body as text, never as markup', () => {
    const html = rendered('<script>alert(1)</script>\n\nand <b onclick="x()">bold</b>');
    expect(html.querySelector('script, b')).toBeNull();
    expect(html.textContent).toContain('<script>alert(1)</script>');
    expect(html.textContent).toContain('<b onclick="x()">bold</b>');
  });

  it('loads no image: its alt text and address are shown instead', () => {
    const html = rendered('![a cat](https://example.com/cat.png)');
    expect(html.querySelector('img')).toBeNull();
    expect(html.querySelector('.blocked-image')?.textContent).toBe('[a cat: https://example.com/cat.png]');
  });

  it('keeps http(s) and mailto links, opened apart, and drops any other address', () => {
    const html = rendered('[web](https://example.com) [mail](mailto:a@b.c) [js](javascript:alert(1)) [rel](/api/wipe)');
    const links = [...html.querySelectorAll('a')];
    expect(links.map((link) => link.getAttribute('href'))).toEqual(['https://example.com', 'mailto:a@b.c', null, null]);
    for (const link of links) {
      expect(link.getAttribute('rel')).toBe('noopener noreferrer');
      expect(link.getAttribute('target')).toBe('_blank');
      expect(link.getAttribute('referrerpolicy')).toBe('no-referrer');
    }
  });
});
