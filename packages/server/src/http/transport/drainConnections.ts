// While the server drains (its close()), no keep-alive connection may outlive its last answer: Node
// closes only the connections that are idle at close(), and not one that turns idle after it.
//
// Each socket holds, in a slot, the newest response it is answering, until that response finishes.
// At close(), that response gets Connection: close if its headers are not yet sent, and so does every
// response begun after it. Pipelined answers finish in order, so when the newest one finishes while
// draining, the connection has nothing more to answer and is ended: that covers the older answers of
// a pipeline and answers whose headers were already sent, which go out keep-alive. (A request still
// unread in the socket's buffer then is dropped with the connection, as with any keep-alive close.)
// Not covered: the 417 of rejectExpectation (earlyAnswers.ts), which does not pass through track().
//
// The open connections are kept in a Set, added to and removed from once per connection. Responses
// are not: a long-lived Set holding every response until it is answered makes V8 move each in-flight
// request's objects to the old generation, which costs every request far more than the slot does.
// Buys: getEndpoint 64 → 40 µs CPU per request against that Set (2185b39).
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const answering = Symbol('chatbridge.answering');
/** How long a request whose body is still arriving at shutdown may take to arrive. */
export const HALF_SENT_GRACE_MS = 1000;
type Connection = Socket & { [answering]?: ServerResponse | undefined };

export interface ConnectionDrain {
  /** Called first for every request. */
  track(req: IncomingMessage, res: ServerResponse): void;
  /**
   * From now on, answers not yet begun carry Connection: close, and each connection is ended once its
   * newest answer finishes; connections with nothing to answer (idle, or a head half sent) are closed
   * at once, and requests whose body is still arriving after HALF_SENT_GRACE_MS are dropped.
   */
  begin(): void;
}

export function drainConnections(server: Server): ConnectionDrain {
  let draining = false;
  const open = new Set<Connection>();
  server.on('connection', (socket: Connection) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return {
    track(req, res) {
      if (draining) res.setHeader('Connection', 'close');
      const connection = req.socket as Connection;
      // The newest request on the connection: pipelined answers finish in order, so when this one
      // finishes and no newer one came, the connection is idle.
      connection[answering] = res;
      res.once('finish', () => {
        if (connection[answering] !== res) return;
        connection[answering] = undefined;
        // Answers already begun (or queued behind an unanswered one) at begin() went out as
        // keep-alive: Node does not close a connection that turns idle after server.close().
        if (draining && connection.writable) connection.end(() => connection.destroy());
      });
    },
    begin() {
      draining = true;
      for (const connection of open) {
        const res = connection[answering];
        // Nothing to answer: idle, or a request whose head has not all arrived. Node closes only the
        // idle ones, and stops timing out slow heads once the server closes, so a half-sent head
        // would hold the shutdown until its deadline.
        if (res === undefined) {
          connection.destroy();
          continue;
        }
        if (!res.headersSent) res.setHeader('Connection', 'close');
        // A request whose body is still arriving gets a moment to finish; then it is dropped unanswered
        // (only the admin API reads bodies, and nothing of an unread body has been applied).
        if (!res.req.complete) {
          setTimeout(() => {
            if (connection[answering] === res && !res.req.complete) connection.destroy();
          }, HALF_SENT_GRACE_MS).unref();
        }
      }
    },
  };
}
