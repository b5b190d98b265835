/**
 * server.json lists Engram in the MCP Registry (issue 27): it must be valid against the
 * registry's published schema (revision 2025-12-11, kept in schemas/mcp-registry), name
 * the server as package.json's mcpName does (the registry checks the npm package by it),
 * carry package.json's version in every package, and offer only environment variables the
 * `engram` command reads.
 */

import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { readEnvironment } from '../../src/cli/environment.js';

const read = (path: string) => readFileSync(new URL(`../../${path}`, import.meta.url), 'utf8');

const SCHEMA_PATH = 'schemas/mcp-registry/server.schema.2025-12-11.json';
/** The SHA-256 of the published file (schemas/mcp-registry/README.md). */
const SCHEMA_SHA256 = '3fba09590c99f61735d234822279f4223fab9e300c0a81e81c91ab62a4114de0';

interface KeyValue {
  readonly name: string;
}

interface Package {
  readonly registryType: string;
  readonly identifier: string;
  readonly version?: string;
  readonly transport: { readonly type: string };
  readonly environmentVariables?: readonly KeyValue[];
}

interface ServerJson {
  readonly $schema: string;
  readonly name: string;
  readonly version: string;
  readonly repository: { readonly url: string };
  readonly packages: readonly Package[];
}

const serverJson = JSON.parse(read('server.json')) as ServerJson;
const packageJson = JSON.parse(read('package.json')) as {
  name: string;
  version: string;
  mcpName: string;
  repository: { url: string };
};

/** server.json checked against the vendored schema: the errors, none when valid. */
function schemaErrors(document: unknown): unknown[] {
  const ajv = new Ajv({ allErrors: true });
  // An annotation of the registry's schema that JSON Schema draft-07 does not define.
  ajv.addKeyword('example');
  addFormats.default(ajv);
  const validate = ajv.compile(JSON.parse(read(SCHEMA_PATH)));
  return validate(document) ? [] : (validate.errors ?? []);
}

describe('server.json for the MCP Registry', () => {
  it('is checked against the published schema, kept byte for byte', () => {
    expect(createHash('sha256').update(read(SCHEMA_PATH)).digest('hex')).toBe(SCHEMA_SHA256);
    expect(serverJson.$schema).toBe(JSON.parse(read(SCHEMA_PATH)).$id);
  });

  it('is valid against it', () => {
    expect(schemaErrors(serverJson)).toEqual([]);
    // The check does refuse: a server.json without a description is not valid.
    const { description: _, ...undescribed } = serverJson as ServerJson & { description: string };
    expect(schemaErrors(undescribed)).not.toEqual([]);
  });

  it("names the server as package.json's mcpName, with its repository", () => {
    expect(serverJson.name).toBe(packageJson.mcpName);
    expect(packageJson.repository.url).toBe(`git+${serverJson.repository.url}.git`);
  });

  it("carries package.json's version, in every package too", () => {
    expect(serverJson.version).toBe(packageJson.version);
    const kinds = serverJson.packages.map((entry) => `${entry.registryType} ${entry.transport.type}`);
    expect(kinds).toEqual(['npm stdio', 'npm streamable-http', 'oci streamable-http', 'mcpb stdio']);
    for (const entry of serverJson.packages) {
      if (entry.registryType === 'npm') {
        expect(entry.identifier).toBe(packageJson.name);
        expect(entry.version).toBe(packageJson.version);
      }
      if (entry.registryType === 'oci') expect(entry.identifier).toMatch(new RegExp(`:${packageJson.version}$`));
      if (entry.registryType === 'mcpb') {
        expect(entry.version).toBe(packageJson.version);
        expect(entry.identifier).toContain(`/v${packageJson.version}/`);
      }
    }
  });

  it('offers only environment variables the engram command reads', () => {
    const names = new Set(serverJson.packages.flatMap((entry) => entry.environmentVariables ?? []).map((v) => v.name));
    expect(names.size).toBeGreaterThan(0);
    for (const name of names) {
      // The values read, one level down too (engram serve's settings are grouped).
      const read = Object.values(readEnvironment({ [name]: 'set-by-server-json' })).flatMap((value) =>
        typeof value === 'object' && value !== null ? Object.values(value) : [value],
      );
      expect(read, name).toContain('set-by-server-json');
    }
  });
});
