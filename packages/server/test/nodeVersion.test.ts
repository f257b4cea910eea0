// The Node version check every entry point runs first, as a function of the version string.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { nodeVersionProblem, requiredNodeRange } from '../src/nodeVersion.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');
const enginesOf = (path: string) => (JSON.parse(readFileSync(join(ROOT, path), 'utf8')) as { engines: { node: string } }).engines.node;

describe('the Node version check', () => {
  it('when Node is older than engines.node, then one line names the version needed, this one, and how to get it', () => {
    const problem = nodeVersionProblem('v20.20.2', '>=24.0.0');
    expect(problem).toContain('needs Node.js 24.0.0 or later');
    expect(problem).toContain('this is Node.js v20.20.2');
    expect(problem).toContain('nvm install 24');
    expect(problem).not.toContain('\n');
    expect(nodeVersionProblem('v24.2.9', '>=24.3.0')).toBeDefined();
    expect(nodeVersionProblem('v24.3.0', '>=24.3.1')).toBeDefined();
    expect(nodeVersionProblem('not a version', '>=24.0.0')).toBeDefined();
  });

  it('when Node is the version needed or later, then there is no problem', () => {
    for (const version of ['v24.0.0', 'v24.21.0', 'v25.0.0', 'v26.1.0-pre', 'v100.0.0'])
      expect(nodeVersionProblem(version, '>=24.0.0')).toBeUndefined();
    expect(nodeVersionProblem('v24.3.1', '>=24.3.1')).toBeUndefined();
    expect(nodeVersionProblem('v24.4.0', '>=24.3.9')).toBeUndefined();
  });

  it('when the Node pinned for the scripts runs, then it passes the check, and every engines.node says the same', () => {
    const range = requiredNodeRange();
    expect(enginesOf('package.json')).toBe(range);
    expect(enginesOf('packages/server/package.json')).toBe(range);
    const pinned = readFileSync(join(ROOT, '.node-version'), 'utf8').trim();
    expect(
      nodeVersionProblem(
        `v${(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: { node: string } }).devDependencies.node}`,
        range,
      ),
    ).toBeUndefined();
    expect(nodeVersionProblem(`v${pinned}`, range)).toBeUndefined();
  });

  it("when pnpm installs, then it checks the dependencies' engines against the Node the scripts run on (no engine warnings on a fresh clone)", () => {
    const workspace = parse(readFileSync(join(ROOT, 'pnpm-workspace.yaml'), 'utf8')) as { nodeVersion?: string };
    const devNode = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { devDependencies: { node: string } }).devDependencies
      .node;
    expect(workspace.nodeVersion).toBe(devNode);
    expect(devNode.split('.')[0]).toBe(readFileSync(join(ROOT, '.node-version'), 'utf8').trim()); // the version managers' major
  });
});
