import type { Handler } from '../http/operations.ts';
import { respond } from '../http/respond.ts';
import { VERSION } from '../version.ts';

export const getLiveness = (): Handler => (_req, res) => respond(res, 'getLiveness').json(200, { status: 'ok', version: VERSION });
