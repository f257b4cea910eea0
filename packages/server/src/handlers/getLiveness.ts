import type { Handler } from '../http/operations.ts';
import { reply } from '../http/operations.ts';
import { VERSION } from '../version.ts';

export const getLiveness = (): Handler => (_req, res) => reply(res, 'getLiveness', 200, { status: 'ok', version: VERSION });
