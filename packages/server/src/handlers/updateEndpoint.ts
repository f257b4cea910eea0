import type { Issue } from '../domain/issues.ts';
import type { EndpointRecord } from '../domain/record.ts';
import { applyUpdate, type UpdateParams } from '../domain/update.ts';
import type { AppDeps } from '../http/deps.ts';
import { type Handler, pathParam, reply } from '../http/operations.ts';
import { invalid, unauthorized } from '../http/problem.ts';
import { tokenMatchesDigest } from '../tokens.ts';

type Result = { kind: 'ok'; record: EndpointRecord } | { kind: 'unauthorized' } | { kind: 'invalid'; issues: Issue[] };

export const updateEndpoint =
  ({ store, allowHttpWebhooks }: AppDeps): Handler =>
  async (req, res) => {
    // The validator has checked and coerced every parameter against the spec.
    const { token, ...params } = req.query as unknown as UpdateParams & { token: string };
    // Authentication, the update rules and the write all happen in one store transaction.
    const result = await store.update<Result>(pathParam(req, 'endpoint'), (current) => {
      if (!current || !tokenMatchesDigest(current.tokenHash, token)) return { result: { kind: 'unauthorized' } };
      const outcome = applyUpdate(current.record, params, { allowHttpWebhooks });
      if (!outcome.ok) return { result: { kind: 'invalid', issues: outcome.issues } };
      return { ...(outcome.changed && { write: outcome.record }), result: { kind: 'ok', record: outcome.record } };
    });
    if (result.kind === 'unauthorized') throw unauthorized();
    if (result.kind === 'invalid') throw invalid(result.issues);
    reply(res, 'updateEndpoint', 200, result.record);
  };
