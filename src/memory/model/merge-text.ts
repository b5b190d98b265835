/**
 * What a merge (memory/tidy.ts) makes of the entry that receives another: its body, then a
 * heading naming the entry merged into it, that entry's description and its body — so the
 * merged text still says where each part came from, and reads as one Markdown page.
 */

/** `into`'s body followed by `## Merged from <from>`, from's description and from's body. */
export function mergedBody(intoBody: string, from: { name: string; description: string; body: string }): string {
  const section = [`## Merged from ${from.name}`, from.description, from.body.replace(/\n+$/, '')]
    .filter((part) => part !== '')
    .join('\n\n');
  const head = intoBody.replace(/\n+$/, '');
  return `${head === '' ? '' : `${head}\n\n`}${section}\n`;
}
