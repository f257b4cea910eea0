import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { AppDeps } from '../http/deps.ts';
import type { Handler } from '../http/operations.ts';
import { HttpProblem } from '../http/problem.ts';

/** Where `pnpm build` puts the docs: next to the compiled server (dist/docs/index.html). */
export const BUILT_DOCS_FILE = fileURLToPath(new URL('../docs/index.html', import.meta.url));

/**
 * The Redoc page runs its inline script and styles, draws with data: images and fonts, and builds its
 * search worker from a blob; it fetches nothing (the spec is inlined), so every network source stays
 * closed and the page still cannot be framed.
 */
export const DOCS_CSP =
  "default-src 'none'; script-src 'unsafe-inline' blob:; style-src 'unsafe-inline'; img-src data:; font-src data:; worker-src blob:; frame-ancestors 'none'";

export const getDocs = ({ docsFile = BUILT_DOCS_FILE }: Pick<AppDeps, 'docsFile'>): Handler => {
  return (_req, res) => {
    // Checked per request: a build run while the server is up makes the docs appear without a restart.
    if (!existsSync(docsFile)) throw new HttpProblem(404, 'The API docs are not built; run pnpm build.');
    res.setHeader('Content-Security-Policy', DOCS_CSP);
    // An error after the head went out is the client leaving mid-file: nothing more to answer.
    return new Promise<void>((resolve, reject) =>
      res.sendFile(
        docsFile,
        { headers: { 'Content-Type': 'text/html; charset=utf-8' }, cacheControl: false, lastModified: false, etag: false },
        (err) => (err && !res.headersSent ? reject(err) : resolve()),
      ),
    );
  };
};
