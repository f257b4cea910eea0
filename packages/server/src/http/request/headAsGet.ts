// HEAD is GET without a body (RFC 9110 §9.3.2): load balancers probe `HEAD /-/live`. The spec lists
// GET only, so the request is validated and answered as its GET; Node sends no body for a HEAD
// request whatever the handler writes (the response knows its request's method from the start).
import type { RequestHandler } from 'express';

export const answerHeadAsGet: RequestHandler = (req, res, next) => {
  if (req.method === 'HEAD') {
    req.method = 'GET';
    res.locals.head = true; // for answers that would never end by themselves (the event stream)
  }
  next();
};
