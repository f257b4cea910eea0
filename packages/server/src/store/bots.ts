// The bots aggregate: keys that act for one platform on every endpoint (admin/bots.ts keeps them few).
import type { Platform } from '../domain/record.ts';

/** A bot: its key acts for `platform` on every endpoint. Only the key's SHA-256 digest is stored. */
export interface StoredBot {
  id: string;
  platform: Platform;
  keyHash: Uint8Array;
}

export interface Bots {
  /** false when the ID is taken. */
  create(bot: StoredBot): Promise<boolean>;
  /** false when there is no such bot. */
  setKeyHash(id: string, keyHash: Uint8Array): Promise<boolean>;
  /** false when there is no such bot. */
  delete(id: string): Promise<boolean>;
  /** Every bot, in ascending ID order. */
  list(): Promise<StoredBot[]>;
}
