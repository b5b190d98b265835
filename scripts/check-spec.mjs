/**
 * `npm run check-spec`: checks the project's spec/tools.json against the user's original
 * beside DESIGN.md (../shared/spec/tools.json, outside this repository): the copy must be
 * byte for byte the original, and the built openAiTools() must deep-equal it. The test
 * suite checks openAiTools() against the project copy; this script closes the loop to the
 * original, where it exists. Exits 1 on a difference, 2 when the original is absent.
 */

import { readFileSync } from 'node:fs';
import { isDeepStrictEqual } from 'node:util';

const PROJECT_SPEC = new URL('../spec/tools.json', import.meta.url);
const SHARED_SPEC = new URL('../../shared/spec/tools.json', import.meta.url);

let shared;
try {
  shared = readFileSync(SHARED_SPEC);
} catch (error) {
  console.error(`check-spec: cannot read the shared spec ${SHARED_SPEC.pathname}: ${error.message}`);
  process.exit(2);
}

const problems = [];
if (!readFileSync(PROJECT_SPEC).equals(shared)) {
  problems.push('spec/tools.json is not byte for byte the shared spec');
}
const { openAiTools } = await import('../dist/memory/tools/definitions.js');
if (!isDeepStrictEqual(openAiTools(), JSON.parse(shared.toString('utf8')))) {
  problems.push('openAiTools() does not deep-equal the shared spec');
}

for (const problem of problems) console.error(`check-spec: ${problem}`);
if (problems.length === 0) console.log(`check-spec: spec/tools.json and openAiTools() match ${SHARED_SPEC.pathname}`);
process.exit(problems.length === 0 ? 0 : 1);
