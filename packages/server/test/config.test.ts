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
});
