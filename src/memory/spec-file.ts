/**
 * Where the package keeps spec/tools.json, the tools' words. Resolved from this module,
 * one folder below src/ and dist/ alike, because the CLI bundle (scripts/bundle-cli.mjs)
 * puts every module it takes in dist/cli/, one folder below dist/ too: a module deeper
 * than that would resolve the path from the wrong place once bundled.
 */
export const TOOLS_SPEC_URL = new URL('../../spec/tools.json', import.meta.url);
