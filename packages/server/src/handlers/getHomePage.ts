import type { Handler } from '../http/operations.ts';
import { respond } from '../http/respond.ts';
import { VERSION } from '../version.ts';

/** Fixed text: no request value is ever written into it, so nothing needs escaping. */
const PAGE =
  '<!doctype html>\n<html lang="en">\n<head><meta charset="utf-8"><meta name="viewport" content="width=device-width">' +
  `<title>chatbridge ${VERSION}</title></head>\n<body>\n<h1>chatbridge ${VERSION}</h1>\n` +
  '<p>Configuration and relay service for chat bridges.</p>\n<ul>\n' +
  '<li><a href="/-/docs">API docs</a></li>\n<li><a href="/-/live">Liveness</a></li>\n<li><a href="/-/ready">Readiness</a></li>\n' +
  '</ul>\n</body>\n</html>\n';

export const getHomePage = (): Handler => (_req, res) => {
  respond(res, 'getHomePage').text(200, 'html', PAGE);
};
