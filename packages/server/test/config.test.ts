// The environment as operators write it: what loadConfig accepts, and what it refuses naming the variable.
import { describe, expect, it } from 'vitest';
import express from 'express';
import { ConfigError, isTrustedProxyEntry, loadConfig } from '../src/config.ts';
import { describeStore } from '../src/store/open.ts';

describe('loadConfig', () => {
  it('when a boolean variable is written in any letter case, or as 1/0, then it is read as the boolean', () => {
    for (const [value, expected] of [
      ['TRUE', true],
      ['True', true],
      ['1', true],
      ['false', false],
      ['FALSE', false],
      ['0', false],
    ] as const) {
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
    for (const bad of ['garbage', '10.0.0.0/33', '10.0.0.300', 'loopback,nginx', '127.1', '10.0.0.1/255.0.255.0']) {
      expect(() => loadConfig({ CHATBRIDGE_TRUST_PROXY: bad })).toThrow(/CHATBRIDGE_TRUST_PROXY/);
    }
  });

  it('when an entry of CHATBRIDGE_TRUST_PROXY is judged, then the verdict is the one Express (proxy-addr) gives', () => {
    const entries = [
      ...['127.0.0.1', '127.1', '0x7f.0.0.1', '10.0.0.0/8', '10.0.0.0/0', '10.0.0.0/32', '10.0.0.0/33', '10.0.0.0/08'],
      ...['10.0.0.0/255.0.0.0', '10.0.0.1/255.0.255.0', '10.0.0.0/0.0.0.0', '10.0.0.0/255.255.255.255', '10.0.0.0/ff.0.0.0'],
      ...['::1', '::1/128', '::1/129', 'fd00::/8', '::ffff:10.0.0.1', '::ffff:10.0.0.1/104', 'fd00::/ffff::', '::1/255.0.0.0'],
      ...['loopback', 'linklocal', 'uniquelocal', 'nginx', '', '10.0.0.0/', '/8', '10.0.0.0/8/8', 'fe80::1%eth0'],
    ];
    for (const entry of entries) {
      let expressAccepts = true;
      try {
        express().set('trust proxy', entry);
      } catch {
        expressAccepts = false;
      }
      expect([entry, isTrustedProxyEntry(entry)]).toEqual([entry, expressAccepts]);
    }
  });

  it('when the message TTL is a fraction of a second, then it is kept in whole milliseconds (the stores hold instants as integers)', () => {
    expect(loadConfig({ CHATBRIDGE_MESSAGE_TTL_SECONDS: '2.0005' }).messageTtlMs).toBe(2001);
    expect(loadConfig({ CHATBRIDGE_MESSAGE_TTL_SECONDS: '0.0001' }).messageTtlMs).toBe(1);
    expect(loadConfig({ CHATBRIDGE_MESSAGE_TTL_SECONDS: '1.5' }).messageTtlMs).toBe(1500);
  });

  it('when the connection limits are set, then they are read; unset, 10,000 in all and 1,000 per address', () => {
    expect(loadConfig({}).connections).toEqual({ max: 10_000, perAddress: 1_000 });
    expect(loadConfig({ CHATBRIDGE_MAX_CONNECTIONS_PER_ADDRESS: '0' }).connections.perAddress).toBe(0); // 0 turns the cap off
    expect(loadConfig({ CHATBRIDGE_MAX_CONNECTIONS: '500', CHATBRIDGE_MAX_CONNECTIONS_PER_ADDRESS: '20' }).connections).toEqual({
      max: 500,
      perAddress: 20,
    });
    expect(() => loadConfig({ CHATBRIDGE_MAX_CONNECTIONS_PER_ADDRESS: '-1' })).toThrow(/CHATBRIDGE_MAX_CONNECTIONS_PER_ADDRESS/);
  });

  it('when a numeric variable is empty or blank, then its default applies: an empty rate limit does not switch the limit off', () => {
    const config = loadConfig({
      CHATBRIDGE_AUTH_FAILURES_PER_MINUTE: '',
      CHATBRIDGE_RATE_LIMIT_PER_ENDPOINT: ' ',
      CHATBRIDGE_MESSAGE_TTL_SECONDS: '',
      CHATBRIDGE_PG_POOL_SIZE: '',
    });
    expect(config.rateLimits).toEqual({ authFailuresPerMinute: 10, authFailuresPerAddressPerMinute: 3_000, perEndpointPerSecond: 50 });
    expect(config.messageTtlMs).toBe(600_000); // the message TTL: how long the service keeps trying (10 minutes)
    expect(loadConfig({ CHATBRIDGE_RATE_LIMIT_PER_ENDPOINT: '0' }).rateLimits.perEndpointPerSecond).toBe(0); // 0 still turns it off
  });

  it('when CHATBRIDGE_MANAGEMENT_PORT is set, then it is read; unset or empty, there is no management listener', () => {
    expect(loadConfig({ CHATBRIDGE_MANAGEMENT_PORT: '9090' }).managementPort).toBe(9090);
    expect(loadConfig({}).managementPort).toBeUndefined();
    expect(loadConfig({ CHATBRIDGE_MANAGEMENT_PORT: '' }).managementPort).toBeUndefined();
    expect(() => loadConfig({ CHATBRIDGE_MANAGEMENT_PORT: '70000' })).toThrow(/CHATBRIDGE_MANAGEMENT_PORT/);
  });

  it('when DATABASE_URL cannot be parsed (a port that is not a number, a broken host), then start-up stops naming it without echoing it', () => {
    for (const url of ['postgres://u:secret-pw@127.0.0.1:abc/db', 'postgres://u:secret-pw@[::1/db']) {
      expect(() => loadConfig({ CHATBRIDGE_STORE: 'postgres', DATABASE_URL: url })).toThrow(/DATABASE_URL/);
      expect(() => loadConfig({ CHATBRIDGE_STORE: 'postgres', DATABASE_URL: url })).not.toThrow(/secret-pw/);
    }
    expect(loadConfig({ CHATBRIDGE_STORE: 'postgres', DATABASE_URL: 'postgres://u:pw@127.0.0.1:5432/db' }).store.kind).toBe('postgres');
  });

  it('when DATABASE_URL is set and CHATBRIDGE_STORE is not, then the store is PostgreSQL; CHATBRIDGE_STORE=sqlite keeps the embedded store', () => {
    const url = 'postgres://u:pw@db.internal:5433/chatbridge';
    expect(loadConfig({ DATABASE_URL: url }).store).toEqual({ kind: 'postgres', databaseUrl: url, poolSize: 10 });
    expect(loadConfig({ DATABASE_URL: url, CHATBRIDGE_STORE: '' }).store.kind).toBe('postgres'); // empty counts as unset
    expect(loadConfig({ DATABASE_URL: url, CHATBRIDGE_STORE: 'sqlite' }).store.kind).toBe('sqlite');
    expect(loadConfig({}).store.kind).toBe('sqlite');
    // A DATABASE_URL that is not PostgreSQL's, with the store unset: refused naming both settings, not run on SQLite.
    expect(() => loadConfig({ DATABASE_URL: 'mysql://u:secret-pw@db/x' })).toThrow(/DATABASE_URL.*CHATBRIDGE_STORE/s);
    expect(() => loadConfig({ DATABASE_URL: 'mysql://u:secret-pw@db/x' })).not.toThrow(/secret-pw/);
  });

  it('when the store is described for the start-up log, then PostgreSQL shows host, port and database name, never the user or password', () => {
    expect(
      describeStore({ kind: 'postgres', databaseUrl: 'postgres://chat:s3cret@db.internal:5433/chatbridge?sslmode=require', poolSize: 10 }),
    ).toEqual({
      store: 'postgres',
      database: 'db.internal:5433/chatbridge',
    });
    expect(describeStore({ kind: 'postgres', databaseUrl: 'postgresql://chat:s3cret@[::1]/cb', poolSize: 10 })).toEqual({
      store: 'postgres',
      database: '[::1]:5432/cb',
    });
    expect(describeStore({ kind: 'sqlite', sqlitePath: './data/x.sqlite' })).toEqual({ store: 'sqlite', sqlitePath: './data/x.sqlite' });
  });

  it('when the admin token is blanks, or begins or ends with them, then start-up stops naming it', () => {
    for (const bad of [' '.repeat(16), ` ${'a'.repeat(20)}`, `${'a'.repeat(20)}\n`]) {
      expect(() => loadConfig({ CHATBRIDGE_ADMIN_TOKEN: bad })).toThrow(/CHATBRIDGE_ADMIN_TOKEN/);
    }
    expect(loadConfig({ CHATBRIDGE_ADMIN_TOKEN: 'a'.repeat(16) }).adminTokenHash).toBeDefined();
    expect(loadConfig({ CHATBRIDGE_ADMIN_TOKEN: 'inner blanks are sent as they are' }).adminTokenHash).toBeDefined();
  });

  it('when the admin token holds a character outside printable ASCII, then start-up stops naming it (clients could never send it)', () => {
    for (const bad of ['pässwörd-0123456789abc', `${'a'.repeat(20)}\u0000`, `${'a'.repeat(10)}\t${'a'.repeat(10)}`]) {
      expect(() => loadConfig({ CHATBRIDGE_ADMIN_TOKEN: bad })).toThrow(/CHATBRIDGE_ADMIN_TOKEN: must be printable ASCII/);
    }
  });
});
