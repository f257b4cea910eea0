import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { redactUrl } from '../../src/http/observe/redactUrl.ts';

const TOKEN = 'cbt_MgzDdX6_OSnt3agZ0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPqEsU';

describe('redactUrl (the URL a request log line shows)', () => {
  it('when the token key is spelt or percent-encoded another way, then its value is still not shown', () => {
    for (const key of ['token', '%74oken', 'TOKEN', 'token2', '+token', 'token+', 'token[]', ';token', 'to%6Ben']) {
      const logged = redactUrl(`/comm1?${key}=${TOKEN}`);
      expect(logged).not.toContain(TOKEN.slice(4, 30));
      expect(logged.startsWith('/comm1?')).toBe(true);
    }
  });

  it('when a key itself holds a token, or a token is sent in the path, then neither is shown', () => {
    expect(redactUrl(`/comm1?token%3D${TOKEN}`)).toBe('/comm1?[REDACTED]=[REDACTED]');
    expect(redactUrl(`/comm1?${TOKEN}`)).toBe('/comm1?[REDACTED]=[REDACTED]');
    expect(redactUrl(`/${TOKEN}`)).toBe('/[REDACTED]');
    expect(redactUrl(`/update/${TOKEN}?beta=true`)).toBe('/update/[REDACTED]?beta=[REDACTED]');
  });

  it('when an update carries a webhook URL and message text, then the line keeps the parameter names only', () => {
    const webhook = 'https://chat-a.example.com/api/webhooks/123456789012345678/abcdefghijklmnop1';
    const url = `/update/comm3?token=${TOKEN}&channel_chat_a=111111&webhook_chat_a=${webhook}&message_content=hello%20there`;
    expect(redactUrl(url)).toBe(
      '/update/comm3?token=[REDACTED]&channel_chat_a=[REDACTED]&webhook_chat_a=[REDACTED]&message_content=[REDACTED]',
    );
    expect(redactUrl(`/update/comm3?webhook_chat_a=${encodeURIComponent(webhook)}`)).not.toContain('abcdefghijklmnop1');
  });

  it('when the URL has no query, malformed escapes or a fragment, then the path is kept and nothing else leaks', () => {
    expect(redactUrl('/-/live')).toBe('/-/live');
    expect(redactUrl('/admin/endpoints/comm1/token')).toBe('/admin/endpoints/comm1/token');
    expect(redactUrl('/comm1?')).toBe('/comm1');
    expect(redactUrl('/comm1?%ZZ=1&beta')).toBe('/comm1?[REDACTED]=[REDACTED]&beta=[REDACTED]');
    expect(redactUrl(`/comm1?beta=true#${TOKEN}`)).toBe('/comm1?beta=[REDACTED]');
  });

  it('when the query holds more than 50 parameters, then 50 are named and the rest counted', () => {
    const url = `/x?${Array.from({ length: 60 }, (_, i) => `k${i}=v`).join('&')}`;
    const line = redactUrl(url);
    expect(line.split('&')).toHaveLength(51);
    expect(line.endsWith('=[REDACTED]&...(10 more)')).toBe(true);
  });

  it('when a token is split across path segments, or a segment is token-shaped, then no part of it is shown', () => {
    // Tokens as issued (the prefix and 54 random bytes), drawn from a fixed seed so the run is repeatable.
    for (let i = 0; i < 20; i++)
      expectNoPartShown(`cbt_${createHash('sha512').update(`seed ${i}`).digest().subarray(0, 54).toString('base64url')}`);
  });

  const expectNoPartShown = (token: string) => {
    const random = token.slice(4);
    for (const at of [6, 30, 40, 70]) {
      const logged = redactUrl(`/update/${token.slice(0, at)}/${token.slice(at)}?beta=true`);
      expect([at, logged]).toEqual([at, '/update/[REDACTED]/[REDACTED]?beta=[REDACTED]']);
    }
    expect(redactUrl(`/cb/t_${random}`)).toBe('/[REDACTED]/[REDACTED]'); // the prefix itself split
    expect(redactUrl(`/${random.slice(0, 36)}/${random.slice(36)}`)).toBe('/[REDACTED]/[REDACTED]'); // the random part alone
    expect(redactUrl(`/read/${random.slice(0, 40)}`)).toBe('/read/[REDACTED]');
    expect(redactUrl(`/${random.slice(0, 24)}/${random.slice(24, 48)}/${random.slice(48)}`)).toBe('/[REDACTED]/[REDACTED]/[REDACTED]');
  };

  it('when the path holds ordinary endpoint IDs, then they are shown', () => {
    for (const path of [
      '/912345678901234567',
      '/update/912345678901234567',
      '/events/my-community_2',
      '/admin/endpoints/550e8400-e29b-41d4-a716-446655440000/token',
      '/read/Community-Bridge-42',
    ]) {
      expect(redactUrl(path)).toBe(path);
    }
  });
});
