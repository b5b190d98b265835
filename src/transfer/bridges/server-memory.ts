/**
 * The official MCP memory server's file (`@modelcontextprotocol/server-memory`,
 * memory.jsonl): one JSON object a line, entities `{type:"entity", name, entityType,
 * observations[]}` and relations `{type:"relation", from, to, relationType}`. Each entity
 * becomes an entry: its group by entityType (person → people, project → areas, the rest →
 * topics, or as `--map TYPE=GROUP` says), its observations the lines of the body, then its
 * relations as `→ relationType target` lines; its description its name and type. A file
 * of more entities than the entry cap is refused as soon as that is known; an entity line
 * given again word for word is counted, not kept (reported once with how many times it
 * repeats); a line nested deeper than any door takes (MAX_JSON_DEPTH) is refused before
 * it is parsed.
 */

import { MAX_JSON_DEPTH, nestsDeeperThan } from '../../json/json-nesting.js';
import { checkEntryCount } from '../../memory/model/edit.js';
import { groupList, type Policy } from '../../memory/model/policy.js';
import type { BridgeOptions } from './index.js';
import { eachLine } from './lines.js';
import { badSource, excerpt, type ImportFile, type ImportPlan, PlanBuilder, quoted, textOf } from './plan.js';
import { runWhole, STEP_UNITS, type Steps } from './steps.js';

const DEFAULT_MAP: Readonly<Record<string, string>> = { person: 'people', project: 'areas' };
const OTHER_GROUP = 'topics';

interface Entity {
  readonly line: number;
  readonly name: string;
  readonly entityType: string;
  readonly observations: string[];
  readonly relations: string[];
}

const isString = (value: unknown): value is string => typeof value === 'string';

/** The group of each entity type: the defaults, then the user's map (types compared without case). */
function groupFor(map: Readonly<Record<string, string>>, policy: Policy): (entityType: string) => string {
  const table = new Map(Object.entries(DEFAULT_MAP));
  for (const [type, group] of Object.entries(map)) {
    const wanted = group.trim().toLowerCase();
    if (!Object.hasOwn(policy.groups, wanted)) {
      throw badSource(
        `--map ${type}=${group}: "${group}" is not a group of this memory (groups: ${groupList(policy)})`,
        { reason: 'import-map-group', type, group, groups: Object.keys(policy.groups) },
      );
    }
    table.set(type.trim().toLowerCase(), wanted);
  }
  return (entityType) => table.get(entityType.trim().toLowerCase()) ?? OTHER_GROUP;
}

export function* serverMemorySteps(
  files: readonly ImportFile[],
  policy: Policy,
  options: BridgeOptions,
): Steps<ImportPlan> {
  const group = groupFor(options.map ?? {}, policy);
  // The entities kept, in the order they come: one each of a name, and one each of its copies that differ.
  const entities: Entity[] = [];
  // Each name's kept copies, by their type and observations: an exact copy is only counted.
  const byName = new Map<string, Map<string, Entity>>();
  // The copies given again, in the order their first repeat comes: one report item each, whatever their number.
  const repeated = new Map<Entity, { firstRepeat: number; repeats: number }>();
  const relations: { line: number; from: string; to: string; relationType: string }[] = [];
  for (const file of files) {
    const source = textOf(file);
    // Line by line as the file is read, not split first: a file of more entities than the cap is refused at the first one over it.
    yield* eachLine(source, (text, line, next) => {
      if (text.trim() === '') return true;
      const where = `${file.path} line ${line}`;
      if (nestsDeeperThan(text, MAX_JSON_DEPTH)) {
        throw badSource(
          `${where} is JSON nested more than ${MAX_JSON_DEPTH} levels deep, which no memory.jsonl line is`,
        );
      }
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(text) as Record<string, unknown>;
      } catch (error) {
        const last = source.slice(next).trim() === '';
        throw badSource(
          `${where} is not JSON (${(error as Error).message})${last ? ': the file may be cut short' : ''}`,
        );
      }
      if (record === null || typeof record !== 'object' || Array.isArray(record)) {
        throw badSource(`${where} is not a JSON object`);
      }
      if (record.type === 'entity') {
        const { name, entityType, observations } = record;
        if (
          !isString(name) ||
          !name.trim() ||
          !isString(entityType) ||
          !Array.isArray(observations) ||
          !observations.every(isString)
        ) {
          throw badSource(`${where}: an entity needs a name, an entityType and observations (a list of strings)`);
        }
        const copies = byName.get(name) ?? new Map<string, Entity>();
        const content = JSON.stringify([entityType, observations]);
        const copy = copies.get(content);
        if (copy) {
          const again = repeated.get(copy);
          if (again) again.repeats++;
          else repeated.set(copy, { firstRepeat: line, repeats: 1 });
          return true;
        }
        const entity: Entity = { line, name, entityType, observations: [...observations], relations: [] };
        copies.set(content, entity);
        byName.set(name, copies);
        entities.push(entity);
        // Each entity kept becomes an entry of its own (a copy that differs is named -2): past the entry cap,
        // the import is refused whatever follows.
        if (entities.length > policy.maxEntries) checkEntryCount('the import', entities.length, policy);
      } else if (record.type === 'relation') {
        const { from, to, relationType } = record;
        if (!isString(from) || !isString(to) || !isString(relationType)) {
          throw badSource(`${where}: a relation needs from, to and relationType (strings)`);
        }
        relations.push({ line, from, to, relationType });
      } else {
        throw badSource(`${where}: type ${JSON.stringify(record.type)} is neither "entity" nor "relation"`);
      }
      return true;
    });
  }
  if (entities.length === 0) throw badSource('the file holds no entity (lines of {"type":"entity", …})');
  const builder = new PlanBuilder('server-memory', policy, options);
  const orphans: typeof relations = [];
  for (const [index, relation] of relations.entries()) {
    // A name's relations go to its first copy.
    const source = byName.get(relation.from)?.values().next().value;
    if (source) source.relations.push(`→ ${relation.relationType} ${relation.to}`);
    else orphans.push(relation);
    if (index % STEP_UNITS === 0) yield;
  }
  for (const entity of entities) {
    yield* builder.add({
      source: `line ${entity.line}: entity ${quoted(entity.name)} (${excerpt(entity.entityType)})`,
      group: group(entity.entityType),
      slug: entity.name,
      description: `${entity.name} (${entity.entityType})`,
      body: [...entity.observations, ...entity.relations].map((text) => `${text}\n`).join(''),
    });
    yield;
  }
  // The left-out lists can be as long as the file (every relation to no entity): the loop is let go between stretches.
  let leftOut = 0;
  for (const [entity, { firstRepeat, repeats }] of repeated) {
    if (++leftOut % STEP_UNITS === 0) yield;
    const more = repeats > 1 ? `, and ${(repeats - 1).toLocaleString('en-US')} more lines after it` : '';
    builder.leaveOut({
      source: `line ${firstRepeat}: entity ${quoted(entity.name)} (${excerpt(entity.entityType)})`,
      names: [],
      notes: [`the same entity as line ${entity.line}${more}: left out`],
      problem: 'duplicate',
    });
  }
  for (const { line, from, to, relationType } of orphans) {
    if (++leftOut % STEP_UNITS === 0) yield;
    builder.leaveOut({
      source: `line ${line}: relation ${quoted(from)} ${excerpt(relationType)} ${quoted(to)}`,
      names: [],
      notes: [`the file has no entity named ${quoted(from)}: left out`],
      problem: 'not-an-entry',
    });
  }
  return builder.plan();
}

export function parseServerMemory(
  files: readonly ImportFile[],
  policy: Policy,
  options: BridgeOptions = {},
): ImportPlan {
  return runWhole(serverMemorySteps(files, policy, options));
}
