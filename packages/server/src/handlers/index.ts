// One handler per operationId; `Handlers` makes a missing or misnamed one a compile error.
import type { AppDeps } from '../http/deps.ts';
import type { Handlers } from '../http/operations.ts';
import { createBot } from './createBot.ts';
import { createEndpoint } from './createEndpoint.ts';
import { deleteBot } from './deleteBot.ts';
import { deleteEndpoint } from './deleteEndpoint.ts';
import { deleteMessage } from './deleteMessage.ts';
import { editMessage } from './editMessage.ts';
import { getDocs } from './getDocs.ts';
import { getEndpoint } from './getEndpoint.ts';
import { getHomePage } from './getHomePage.ts';
import { getLiveness } from './getLiveness.ts';
import { getMessage } from './getMessage.ts';
import { getMetrics } from './getMetrics.ts';
import { getReadiness } from './getReadiness.ts';
import { listBots } from './listBots.ts';
import { listEndpoints } from './listEndpoints.ts';
import { listMessages } from './listMessages.ts';
import { lookupEndpoints } from './lookupEndpoints.ts';
import { markRead } from './markRead.ts';
import { rotateBotKey } from './rotateBotKey.ts';
import { removeFromEndpoint } from './removeFromEndpoint.ts';
import { rotateEndpointToken } from './rotateEndpointToken.ts';
import { streamAllEvents } from './streamAllEvents.ts';
import { streamEndpointEvents } from './streamEndpointEvents.ts';
import { updateEndpoint } from './updateEndpoint.ts';

export const buildHandlers = (deps: AppDeps): Handlers => ({
  getEndpoint: getEndpoint(deps),
  updateEndpoint: updateEndpoint(deps),
  markRead: markRead(deps),
  removeFromEndpoint: removeFromEndpoint(deps),
  lookupEndpoints: lookupEndpoints(deps),
  listMessages: listMessages(deps),
  getMessage: getMessage(deps),
  editMessage: editMessage(deps),
  deleteMessage: deleteMessage(deps),
  streamEndpointEvents: streamEndpointEvents(deps),
  streamAllEvents: streamAllEvents(deps),
  createEndpoint: createEndpoint(deps),
  listEndpoints: listEndpoints(deps),
  rotateEndpointToken: rotateEndpointToken(deps),
  deleteEndpoint: deleteEndpoint(deps),
  createBot: createBot(deps),
  listBots: listBots(deps),
  rotateBotKey: rotateBotKey(deps),
  deleteBot: deleteBot(deps),
  getLiveness: getLiveness(),
  getReadiness: getReadiness(deps),
  getMetrics: getMetrics(deps),
  getHomePage: getHomePage(),
  getDocs: getDocs(deps),
});
