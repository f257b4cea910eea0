// JSON bodies are parsed for the admin API only, the one API that takes them. The record operations
// never read a body, as with the original service: bots that also send their parameters as one
// (`requests.post(url, params=p, json=p)`) keep working whatever its size or content.
import express, { type RequestHandler } from 'express';
import { isAdminPath } from '../problem.ts';

export function adminJsonBodies(): RequestHandler {
  const parse = express.json({ limit: '16kb' });
  return (req, res, next) => (isAdminPath(req.path) ? parse(req, res, next) : next());
}
