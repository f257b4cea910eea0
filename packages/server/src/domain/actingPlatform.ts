// What a bot key may do: it acts for one platform, on every endpoint. A request authenticated with
// an endpoint's token acts for no platform in particular (the token's holder is trusted to name it).
import type { Platform } from './record.ts';

/** Why a request acting for `acting` may not name `named` (as `sender`, or `markRead`'s `platform`), if it may not. */
export function platformRefusal(
  acting: Platform | undefined,
  named: Platform | undefined,
  parameter: 'sender' | 'platform',
): string | undefined {
  if (acting === undefined || named === undefined || named === acting) return undefined;
  return `This bot key acts for ${acting}; ${parameter} ${named} is not its platform. Nothing was applied.`;
}

/** The platform `markRead` marks: the one named, else the bot key's; undefined when neither is known. */
export const platformToMark = (acting: Platform | undefined, named: Platform | undefined): Platform | undefined => named ?? acting;
