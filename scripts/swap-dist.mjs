/**
 * Puts a finished build in place of dist/ so that a running `engram serve` (npm start)
 * never finds a file of its build missing: `npm run build` (build.mjs) writes the new
 * build into a folder of its own, and only then is it moved in here. Node cannot swap two
 * folders in one step, so the build moves in file by file, each by one rename, which
 * replaces a file in a single step: first the files at new paths (the web UI's and the
 * CLI's hashed assets and chunks), then those at paths the old build has too (index.html,
 * main.js, which refer to the new ones, already there), and last the old build's files
 * the new one has not are removed. At every moment dist/ holds each file of the old build
 * or the new one, and whatever index.html or main.js is there finds the files it refers to.
 *
 * But for the hashed files (the CLI bundle's chunks, the web UI's assets): a server running
 * the old main.js imports some chunks only when first needed (the MCP SDK with the first
 * request to /mcp), and a tab opened on the old index.html loads some assets only when
 * first needed (the Import page's ImportFrom-<hash>.js), so an old hashed file the new
 * build has not stays for KEEP_BUILDS builds, counted in superseded-files.json, then goes.
 * Kept that long (not one build only) because `npm test`, run after each edit, builds while
 * one `npm start` runs on; and not forever, so that dist/ holds at most that many earlier
 * builds' hashed files (under 5 MB each today, and a build of unchanged sources adds none:
 * their names hash their contents). A build for `npm pack` or `npm publish` keeps none:
 * dist/ is then the new build exactly, nothing of an earlier one packed.
 */

import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * A file named by a hash of its contents, which a running server or an open tab may still
 * load: a chunk of the CLI bundle (or its source map), an asset of the web UI.
 */
const HASHED = /^(cli\/[^/]+\.chunk\.js(\.map)?|web\/assets\/.+)$/;
/** How many builds an earlier build's hashed file stays for. */
export const KEEP_BUILDS = 10;
/** The earlier builds' hashed files kept, each with the number of builds since its own. */
export const SUPERSEDED = 'superseded-files.json';

/** Every file under `root`, as paths relative to it (folders are not listed). */
export function filesUnder(root, folder = '') {
  const found = [];
  for (const entry of readdirSync(join(root, folder), { withFileTypes: true })) {
    const path = folder === '' ? entry.name : join(folder, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(root, path));
    else found.push(path);
  }
  return found;
}

/**
 * Moves the build in `built` into `target` as the header says, awaiting `afterStep` after
 * each step (tests check the folder between steps), then removes `built`. With
 * `keepEarlier` false (a build to pack), the earlier builds' hashed files go too.
 */
export async function swapIn(built, target, { keepEarlier = true, afterStep = async () => {} } = {}) {
  if (!existsSync(target)) {
    renameSync(built, target);
    await afterStep();
    return;
  }
  const incoming = filesUnder(built);
  const present = new Set(filesUnder(target));
  const order = [...incoming.filter((path) => !present.has(path)), ...incoming.filter((path) => present.has(path))];
  for (const path of order) {
    const destination = join(target, path);
    makeFolder(target, dirname(path));
    // A folder of the old build where the new one has a file (rare: a module became a file).
    if (existsSync(destination) && statSync(destination).isDirectory()) rmSync(destination, { recursive: true });
    renameSync(join(built, path), destination);
    await afterStep();
  }
  const kept = new Set(incoming);
  const age = existsSync(join(target, SUPERSEDED)) ? JSON.parse(readFileSync(join(target, SUPERSEDED), 'utf8')) : {};
  const superseded = {};
  if (keepEarlier) {
    for (const path of present) {
      const builds = (age[path] ?? 0) + 1;
      if (HASHED.test(path) && !kept.has(path) && builds <= KEEP_BUILDS) superseded[path] = builds;
    }
  }
  if (Object.keys(superseded).length > 0) writeFileSync(join(target, SUPERSEDED), JSON.stringify(superseded, null, 1));
  else rmSync(join(target, SUPERSEDED), { force: true });
  for (const path of present) {
    if (kept.has(path) || path in superseded || path === SUPERSEDED || !existsSync(join(target, path))) continue;
    rmSync(join(target, path), { recursive: true });
    await afterStep();
  }
  removeEmptyFolders(target);
  rmSync(built, { recursive: true, force: true });
}

/** Makes `folder` under `root`, removing a file of the old build that stands where one of its folders goes. */
function makeFolder(root, folder) {
  if (folder === '.' || folder === '') return;
  const path = join(root, folder);
  if (existsSync(path)) {
    if (statSync(path).isDirectory()) return;
    rmSync(path);
  }
  makeFolder(root, dirname(folder));
  mkdirSync(path, { recursive: true });
}

/** Removes the folders under `root` left empty (the old build's, once their files are gone). */
function removeEmptyFolders(root) {
  for (const entry of readdirSync(root, { withFileTypes: true })) {
    if (!entry.isDirectory()) continue;
    const path = join(root, entry.name);
    removeEmptyFolders(path);
    if (readdirSync(path).length === 0) rmdirSync(path);
  }
}
