import type { Handler } from '../http/operations.ts';
import { reply } from '../http/operations.ts';

export const getLiveness = (): Handler => (_req, res) => reply(res, 'getLiveness', 200, { status: 'ok' });
