// Endpoint IDs that name a route of the service. `GET /{endpoint}` shares its one-segment shape with
// `GET /lookup` and `GET /events`, and `/{endpoint}` with the first segment of every other route, so
// an endpoint named like one of them could never be read at its own path. Routing ignores letter
// case, so the words are reserved in any case.
export const RESERVED_ENDPOINT_IDS = ['-', 'admin', 'events', 'lookup', 'messages', 'read', 'remove', 'update'] as const;

const RESERVED = new Set<string>(RESERVED_ENDPOINT_IDS);

/** Whether `id` names a route of the service rather than an endpoint. */
export const isReservedEndpointId = (id: string): boolean => RESERVED.has(id.toLowerCase());

/** Why `id` cannot be an endpoint's, if it cannot (the text a 400 or a refusal names it with). */
export const reservedIdProblem = (id: string): string | undefined =>
  isReservedEndpointId(id)
    ? `"${id}" is reserved: it names a route of the service (${RESERVED_ENDPOINT_IDS.join(', ')}, in any letter case)`
    : undefined;
