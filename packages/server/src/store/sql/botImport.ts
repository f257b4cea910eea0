// What an import comes to, decided the same way by both adapters inside their import transaction. With
// the bots it carries: a bot the store lacks is added; one it has with the same platform and key digest
// is left as it is (so a rerun changes nothing); one it has with anything else, or whose key digest
// another bot of the store holds, is a conflict, and then nothing of the import is written.
import type { StoredBot } from '../bots.ts';
import type { ImportOutcome } from '../snapshot.ts';

export interface BotImportPlan {
  fresh: StoredBot[];
  unchanged: number;
  /** Bot IDs, ascending. */
  conflicts: string[];
}

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

export function planBotImport(existing: readonly StoredBot[], incoming: readonly StoredBot[]): BotImportPlan {
  const byId = new Map(existing.map((b) => [b.id, b]));
  const idByKey = new Map(existing.map((b) => [hex(b.keyHash), b.id]));
  const plan: BotImportPlan = { fresh: [], unchanged: 0, conflicts: [] };
  for (const bot of incoming) {
    const have = byId.get(bot.id);
    const keyHolder = idByKey.get(hex(bot.keyHash));
    if (have && have.platform === bot.platform && keyHolder === bot.id) plan.unchanged++;
    else if (have || keyHolder !== undefined) plan.conflicts.push(bot.id);
    else plan.fresh.push(bot);
  }
  plan.conflicts.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return plan;
}

/** What an import found once its rows were staged: the endpoints that conflict, those already there as they are, and its bots' plan. */
export interface ImportPlan {
  /** Endpoint IDs, ascending. */
  conflicts: string[];
  unchanged: number;
  bots: BotImportPlan | undefined;
}

/** Anything conflicts: nothing of the import is written. */
export const isRefused = (plan: ImportPlan): boolean => plan.conflicts.length > 0 || (plan.bots?.conflicts.length ?? 0) > 0;

/** The import's outcome: `imported` endpoints added (0 when refused), and its bots as planned. */
export function importOutcome(plan: ImportPlan, imported: number): ImportOutcome {
  const { conflicts, unchanged, bots } = plan;
  const botsAdded = isRefused(plan) ? 0 : (bots?.fresh.length ?? 0);
  return {
    imported,
    unchanged,
    conflicts,
    ...(bots && { bots: { imported: botsAdded, unchanged: bots.unchanged, conflicts: bots.conflicts } }),
  };
}
