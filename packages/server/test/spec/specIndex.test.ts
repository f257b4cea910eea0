import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadSpecIndex } from '../../src/spec/specIndex.ts';

/** A spec file of `text` in a fresh folder (the index is kept per file). */
function specFile(text: string): string {
  const file = join(mkdtempSync(join(tmpdir(), 'chatbridge-spec-')), 'openapi.yaml');
  writeFileSync(file, text);
  return file;
}

const SPEC = `
openapi: 3.1.0
info: { title: t, version: '1' }
security: [{ key: [] }]
paths:
  /things/{id}:
    parameters:
      - $ref: '#/components/parameters/Id'
      - { name: limit, in: query, schema: { type: integer } }
    get:
      operationId: getThing
      parameters:
        - { name: limit, in: query, allowEmptyValue: true, schema: { type: string } }
        - $ref: '#/components/parameters/Kind'
    post:
      operationId: updateThing
      security: []
components:
  parameters:
    Id: { name: id, in: path, required: true, schema: { type: string } }
    Kind: { name: kind, in: query, schema: { $ref: '#/components/schemas/Kind' } }
  schemas:
    Kind: { type: boolean }
  securitySchemes:
    key: { type: apiKey, in: query, name: token }
`;

describe('spec index (the bundled spec, read once, $refs resolved in one place)', () => {
  it("when a parameter is a $ref, then it is resolved, its pointer names its component and its type follows its schema's $ref", () => {
    const kind = loadSpecIndex(specFile(SPEC))
      .operation('getThing')!
      .parameters.find((p) => p.name === 'kind');
    expect(kind).toEqual({ name: 'kind', in: 'query', allowEmptyValue: false, type: 'boolean', pointer: '/components/parameters/Kind' });
  });

  it("when an operation declares a parameter its path also declares, then the operation's replaces the path's", () => {
    const spec = loadSpecIndex(specFile(SPEC));
    expect(spec.operation('getThing')!.parameters.map((p) => [p.name, p.type, p.pointer])).toEqual([
      ['id', 'string', '/components/parameters/Id'],
      ['limit', 'string', '/paths/~1things~1{id}/get/parameters/0'],
      ['kind', 'boolean', '/components/parameters/Kind'],
    ]);
    expect(spec.operation('updateThing')!.parameters.map((p) => p.name)).toEqual(['id', 'limit']);
  });

  it("when an operation has no security of its own, then the document's applies; an empty list means none", () => {
    const spec = loadSpecIndex(specFile(SPEC));
    expect(spec.operation('getThing')!.security).toEqual([{ key: [] }]);
    expect(spec.operation('updateThing')!.security).toEqual([]);
    expect(spec.securityScheme('key')).toMatchObject({ type: 'apiKey', in: 'query', name: 'token' });
  });

  it('when the same file is loaded twice, then it is read once and no reader can change it', () => {
    const file = specFile(SPEC);
    const spec = loadSpecIndex(file);
    expect(loadSpecIndex(file)).toBe(spec);
    expect(Object.isFrozen(spec.resolve('#/components/schemas/Kind'))).toBe(true);
  });

  it('when a $ref points at nothing, then loading fails and names it', () => {
    const broken = SPEC.replace("'#/components/parameters/Kind'", "'#/components/parameters/Missing'");
    expect(() => loadSpecIndex(specFile(broken))).toThrow('#/components/parameters/Missing');
  });

  it('when the bundled spec is loaded, then each of its operations is indexed once by operationId', () => {
    const ids = loadSpecIndex().operations.map((op) => op.operationId);
    expect(ids).toContain('updateEndpoint');
    expect(new Set(ids).size).toBe(ids.length);
  });
});
