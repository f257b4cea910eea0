// The checks of copies' IDs a request reports, made before its write (the log is not part of the
// endpoint's row): an ID names one kept message per endpoint and platform, so one that another
// message has already is refused (409), and a native reply's target is looked up. Only for a caller
// that may make the request: anyone else is answered by the write's own rules (401, 403), and
// nothing about the log is told to them.
import { actingPlatform, authenticate, type Credentials } from '../auth/authenticate.ts';
import { duplicateIdDetail, type NativeReply } from '../../domain/messageIds.ts';
import type { Platform } from '../../domain/record.ts';
import type { EndpointStore } from '../../store/port.ts';
import type { Request } from 'express';
import { refinedProblem, unauthorized } from '../problem.ts';

type Deps = Credentials & { store: EndpointStore };

/** The platform the request acts for, when the caller may act for `named` (undefined: its write refuses it). */
async function actingFor(req: Request, deps: Deps, endpointId: string, named: Platform | undefined): Promise<Platform | undefined> {
  const found = await deps.store.endpoints.get(endpointId);
  const actor = authenticate(req, found, deps);
  if (!actor || !found) throw unauthorized();
  const acting = actingPlatform(actor);
  if (acting !== undefined && named !== undefined && acting !== named) return undefined;
  return named ?? acting;
}

/** Refuses `id` for `platform` when another message than `number` (any, without one) has it; true when `number` has it already. */
async function checkFree(deps: Deps, endpointId: string, platform: Platform, id: string, number?: number): Promise<boolean> {
  const taken = await deps.store.messages.find(endpointId, platform, id);
  if (taken && taken.number !== number) throw refinedProblem('duplicate-message-id', duplicateIdDetail(platform, id, taken.number));
  return taken !== undefined;
}

/**
 * updateEndpoint's `message_id` (must be new) and `message_reply_to` (the message it answers, when the
 * log keeps it and it was not deleted: otherwise the message is an ordinary reply, its quote fields
 * shown as given).
 */
export async function newMessageCopies(
  req: Request,
  deps: Deps,
  endpointId: string,
  params: { trigger?: boolean; sender?: Platform; message_id?: string; message_reply_to?: string },
): Promise<NativeReply | undefined> {
  const { trigger, sender, message_id: id, message_reply_to: replyTo } = params;
  if (trigger !== true || sender === undefined || (id === undefined && replyTo === undefined)) return undefined;
  if ((await actingFor(req, deps, endpointId, sender)) === undefined) return undefined;
  if (id !== undefined) await checkFree(deps, endpointId, sender, id);
  if (replyTo === undefined) return undefined;
  const target = await deps.store.messages.find(endpointId, sender, replyTo);
  return target && target.deletedAt === null ? { number: target.number, ids: target.ids } : undefined;
}

/**
 * markRead's `message_id`: the ID of the copy the platform posted of message `number`. Returns the ID
 * to record, or undefined when that copy has it already (a repeated report writes nothing).
 */
export async function reportedCopy(
  req: Request,
  deps: Deps,
  endpointId: string,
  named: Platform | undefined,
  number: number,
  id: string,
): Promise<string | undefined> {
  const platform = await actingFor(req, deps, endpointId, named);
  if (platform === undefined) return id;
  return (await checkFree(deps, endpointId, platform, id, number)) ? undefined : id;
}
