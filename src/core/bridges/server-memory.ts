/**
 * The official MCP memory server's file (`@modelcontextprotocol/server-memory`,
 * memory.jsonl): one JSON object a line, entities `{type:"entity", name, entityType,
 * observations[]}` and relations `{type:"relation", from, to, relationType}`. Each entity
 * becomes an entry: its group by entityType (person → people, project → areas, the rest →
 * topics, or as `--map TYPE=GROUP` says), its observations the lines of the body, then its
 * relations as `→ relationType target` lines; its description its name and type. A file
 * of more entities than the entry cap is refused as soon as that is known.
 */

import { checkEntryCount } from '../edit.js';
import { groupList, type Policy } from '../policy.js';
import type { BridgeOptions } from './index.js';
import { badSource, buildPlan, type Draft, type ImportFile, type ImportPlan, type PlanItem, textOf } from './plan.js';

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

export function parseServerMemory(
  files: readonly ImportFile[],
  policy: Policy,
  options: BridgeOptions = {},
): ImportPlan {
  const group = groupFor(options.map ?? {}, policy);
  const entities: Entity[] = [];
  const byName = new Map<string, Entity>();
  const relations: { line: number; from: string; to: string; relationType: string }[] = [];
  for (const file of files) {
    const source = textOf(file);
    // Line by line as the file is read, not split first: a file of more entities than the cap is refused at the first one over it.
    for (let start = 0, line = 1; start <= source.length; line++) {
      const newline = source.indexOf('\n', start);
      const end = newline === -1 ? source.length : newline;
      const text = source.slice(start, end);
      start = end + 1;
      if (text.trim() === '') continue;
      const where = `${file.path} line ${line}`;
      let record: Record<string, unknown>;
      try {
        record = JSON.parse(text) as Record<string, unknown>;
      } catch (error) {
        const last = source.slice(start).trim() === '';
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
        const entity: Entity = { line, name, entityType, observations: [...observations], relations: [] };
        entities.push(entity);
        if (!byName.has(name)) byName.set(name, entity);
        // Each entity name becomes an entry of its own: past the entry cap, the import is refused whatever follows.
        if (byName.size > policy.maxEntries) checkEntryCount('the import', byName.size, policy);
      } else if (record.type === 'relation') {
        const { from, to, relationType } = record;
        if (!isString(from) || !isString(to) || !isString(relationType)) {
          throw badSource(`${where}: a relation needs from, to and relationType (strings)`);
        }
        relations.push({ line, from, to, relationType });
      } else {
        throw badSource(`${where}: type ${JSON.stringify(record.type)} is neither "entity" nor "relation"`);
      }
    }
  }
  const orphans: PlanItem[] = [];
  for (const { line, from, to, relationType } of relations) {
    const source = byName.get(from);
    if (source) source.relations.push(`→ ${relationType} ${to}`);
    else {
      orphans.push({
        source: `line ${line}: relation ${JSON.stringify(from)} ${relationType} ${JSON.stringify(to)}`,
        names: [],
        notes: [`the file has no entity named ${JSON.stringify(from)}: left out`],
        problem: 'not-an-entry',
      });
    }
  }
  if (entities.length === 0) throw badSource('the file holds no entity (lines of {"type":"entity", …})');
  const drafts = entities.map(
    (entity): Draft => ({
      source: `line ${entity.line}: entity ${JSON.stringify(entity.name)} (${entity.entityType})`,
      group: group(entity.entityType),
      slug: entity.name,
      description: `${entity.name} (${entity.entityType})`,
      body: [...entity.observations, ...entity.relations].map((text) => `${text}\n`).join(''),
    }),
  );
  const plan = buildPlan('server-memory', drafts, policy, options);
  return { ...plan, items: [...plan.items, ...orphans] };
}
