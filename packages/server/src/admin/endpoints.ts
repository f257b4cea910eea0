// Provisioning, shared by the admin API and the CLI: tokens are issued here and only their digests
// reach the store.
import { initialRecord } from '../domain/record.ts';
import type { EndpointStore } from '../store/port.ts';
import { TOKEN_PREFIX, hashToken, issueToken } from '../tokens.ts';

export interface IssuedToken {
  id: string;
  token: string;
}

export const ENDPOINT_ID = /^[A-Za-z0-9_-]{1,64}$/;
/** What a bot can present as `token` (the spec's token parameter): an existing token must match it. */
const ENDPOINT_TOKEN = /^[A-Za-z0-9_-]{71,85}$/;

/**
 * Why an existing token cannot be given to a new endpoint, if it cannot: one chatbridge issued
 * (`cbt_`) belongs to its own endpoint, and copying it would let that endpoint's bots into this one.
 */
export function existingTokenProblem(token: string): string | undefined {
  if (!ENDPOINT_TOKEN.test(token)) return 'must be 71 to 85 characters of A-Z a-z 0-9 _ - (what bots can present)';
  if (token.startsWith(TOKEN_PREFIX))
    return `is one chatbridge issued (${TOKEN_PREFIX}...): it belongs to its own endpoint; give only tokens of the original service`;
  return undefined;
}

/**
 * undefined when the ID is taken. `existingToken`: a migrated endpoint keeps the token its bots
 * already hold (validated by the caller: the spec's token format); otherwise one is issued.
 */
export async function createEndpoint(store: EndpointStore, id: string, existingToken?: string): Promise<IssuedToken | undefined> {
  const token = existingToken ?? issueToken();
  return (await store.endpoints.create(id, hashToken(token), initialRecord())) ? { id, token } : undefined;
}

/** undefined when there is no such endpoint. The old token stops working with this call. */
export async function rotateEndpointToken(store: EndpointStore, id: string): Promise<IssuedToken | undefined> {
  const token = issueToken();
  return (await store.endpoints.setTokenHash(id, hashToken(token))) ? { id, token } : undefined;
}

export async function listEndpointIds(
  store: EndpointStore,
  cursor: string | undefined,
  limit: number,
): Promise<{ ids: string[]; next_cursor: string | null }> {
  // One extra row tells whether another page follows.
  const rows = await store.endpoints.listIds(cursor, limit + 1);
  const ids = rows.slice(0, limit);
  return { ids, next_cursor: rows.length > limit ? ids[ids.length - 1]! : null };
}
