// Checks the validator cannot make on its own, run before it: the URL decodes, query keys are plain
// names, and integer parameters are written as plain decimal integers (the validator's coercion would
// accept "Infinity", "1e3" or "0x10"). Each failure is a 400 naming the parameter.
import { readFileSync } from 'node:fs';
import type { RequestHandler } from 'express';
import { parse as parseYaml } from 'yaml';
import type { Issue } from '../domain/issues.ts';
import { invalid } from './problem.ts';

interface SpecParameter {
  name?: string;
  in?: string;
  schema?: { type?: string };
}

/** Names of every integer query parameter in the spec (read once at start-up). */
export function integerQueryParameters(specPath: string): Set<string> {
  const spec = parseYaml(readFileSync(specPath, 'utf8')) as {
    paths?: Record<string, Record<string, { parameters?: SpecParameter[] }> & { parameters?: SpecParameter[] }>;
    components?: { parameters?: Record<string, SpecParameter> };
  };
  const resolve = (p: SpecParameter & { $ref?: string }) =>
    p.$ref ? spec.components?.parameters?.[p.$ref.split('/').pop() ?? ''] ?? {} : p;
  const names = new Set<string>();
  for (const item of Object.values(spec.paths ?? {})) {
    const lists = [item.parameters ?? [], ...Object.values(item).map((op) => (Array.isArray(op) ? [] : (op?.parameters ?? [])))];
    for (const p of lists.flat().map(resolve)) if (p.in === 'query' && p.schema?.type === 'integer' && p.name) names.add(p.name);
  }
  return names;
}

const DECIMAL_INTEGER = /^-?\d+$/;

export function requestHygiene(integerParameters: Set<string>): RequestHandler {
  return (req, _res, next) => {
    try {
      decodeURIComponent(req.path);
    } catch {
      return next(invalid([{ parameter: 'endpoint', in: 'path', message: 'is not valid percent-encoded UTF-8' }]));
    }
    const issues: Issue[] = [];
    for (const [key, value] of Object.entries(req.query)) {
      if (/[[\]]/.test(key)) issues.push({ parameter: key, in: 'query', message: 'unknown parameter (bracket notation is not supported)' });
      else if (integerParameters.has(key) && typeof value === 'string' && !(DECIMAL_INTEGER.test(value) && Number.isSafeInteger(Number(value)))) {
        issues.push({ parameter: key, in: 'query', message: 'must be a decimal integer' });
      }
    }
    next(issues.length > 0 ? invalid(issues) : undefined);
  };
}
