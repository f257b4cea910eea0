// The environment as operators write it: what loadConfig accepts, and what it refuses naming the variable.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../src/config.ts';

describe('loadConfig', () => {
  it('when a boolean variable is written in any letter case, or as 1/0, then it is read as the boolean', () => {
    for (const [value, expected] of [['TRUE', true], ['True', true], ['1', true], ['false', false], ['FALSE', false], ['0', false]] as const) {
      expect(loadConfig({ CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE: value }).allowPrivateWebhooks).toBe(expected);
    }
  });

  it('when a boolean variable holds anything else, then start-up stops naming the variable', () => {
    expect(() => loadConfig({ CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE: 'yes' })).toThrow(ConfigError);
    expect(() => loadConfig({ CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE: 'yes' })).toThrow(/CHATBRIDGE_WEBHOOK_ALLOW_PRIVATE/);
  });

  it('when PORT is empty, then the default port is used, not a random one; 0 still asks for one', () => {
    expect(loadConfig({ PORT: '' }).port).toBe(8080);
    expect(loadConfig({}).port).toBe(8080);
    expect(loadConfig({ PORT: '0' }).port).toBe(0);
    expect(() => loadConfig({ PORT: 'eighty' })).toThrow(/PORT/);
  });

  it('when CHATBRIDGE_TRUST_PROXY is not a setting Express understands, then start-up stops naming it', () => {
    for (const ok of ['true', 'false', '2', 'loopback', '10.0.0.0/8, 192.168.1.7', 'fd00::/8,loopback', '10.0.0.0/255.0.0.0']) {
      expect(() => loadConfig({ CHATBRIDGE_TRUST_PROXY: ok })).not.toThrow();
    }
    for (const bad of ['garbage', '10.0.0.0/33', '10.0.0.300', 'loopback,nginx']) {
      expect(() => loadConfig({ CHATBRIDGE_TRUST_PROXY: bad })).toThrow(/CHATBRIDGE_TRUST_PROXY/);
    }
  });

  it('when DATABASE_URL cannot be parsed (a port that is not a number, a broken host), then start-up stops naming it without echoing it', () => {
    for (const url of ['postgres://u:secret-pw@127.0.0.1:abc/db', 'postgres://u:secret-pw@[::1/db']) {
      expect(() => loadConfig({ CHATBRIDGE_STORE: 'postgres', DATABASE_URL: url })).toThrow(/DATABASE_URL/);
      expect(() => loadConfig({ CHATBRIDGE_STORE: 'postgres', DATABASE_URL: url })).not.toThrow(/secret-pw/);
    }
    expect(loadConfig({ CHATBRIDGE_STORE: 'postgres', DATABASE_URL: 'postgres://u:pw@127.0.0.1:5432/db' }).store.kind).toBe('postgres');
  });

  it('when the admin token is blanks, or begins or ends with them, then start-up stops naming it', () => {
    for (const bad of [' '.repeat(16), ` ${'a'.repeat(20)}`, `${'a'.repeat(20)}\n`]) {
      expect(() => loadConfig({ CHATBRIDGE_ADMIN_TOKEN: bad })).toThrow(/CHATBRIDGE_ADMIN_TOKEN/);
    }
    expect(loadConfig({ CHATBRIDGE_ADMIN_TOKEN: 'a'.repeat(16) }).adminTokenHash).toBeDefined();
  });
});
