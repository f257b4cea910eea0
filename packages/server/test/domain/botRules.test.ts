import { describe, expect, it } from 'vitest';
import { platformRefusal, platformToMark } from '../../src/domain/actingPlatform.ts';
import { RESERVED_ENDPOINT_IDS, isReservedEndpointId } from '../../src/domain/reservedIds.ts';

describe('reserved endpoint IDs', () => {
  it('when an ID names a route of the service, in any letter case, then it is reserved', () => {
    for (const id of RESERVED_ENDPOINT_IDS) {
      expect(isReservedEndpointId(id)).toBe(true);
      expect(isReservedEndpointId(id.toUpperCase())).toBe(true);
    }
  });

  it('when an ID only contains a route word, then it is free', () => {
    for (const id of ['lookups', 'my-events', 'admin2', '--', '912345678901234567']) expect(isReservedEndpointId(id)).toBe(false);
  });
});

describe('the platform a bot key acts for', () => {
  it('when a bot key names its own platform or none, then nothing is refused', () => {
    expect(platformRefusal('chat_b', 'chat_b', 'sender')).toBeUndefined();
    expect(platformRefusal('chat_b', undefined, 'sender')).toBeUndefined();
  });

  it('when a bot key names another platform, then it is refused naming both', () => {
    expect(platformRefusal('chat_b', 'chat_a', 'sender')).toMatch(/chat_b.*chat_a/);
  });

  it('when the token acts, then any platform may be named', () => {
    expect(platformRefusal(undefined, 'chat_a', 'platform')).toBeUndefined();
  });

  it('when markRead names no platform, then a bot key marks its own', () => {
    expect(platformToMark('chat_c', undefined)).toBe('chat_c');
    expect(platformToMark(undefined, 'chat_a')).toBe('chat_a');
  });
});
