// While the server drains (its close()), every answer closes its connection: a keep-alive connection
// whose request was in flight at close() would otherwise stay open (Node closes only idle ones then)
// and hold the shutdown until its deadline.
//
// Each connection remembers, on its socket, the newest response it is answering, and only until
// that response finishes. Pipelined answers finish in order, so when it finishes while draining the
// connection is idle and is ended: an answer begun before close() (or queued behind one not yet
// answered) went out as keep-alive, and Node does not end a connection that turns idle after it. Not a set of in-flight responses: adding every response to one long-lived Set and
// deleting it when answered made V8 move each in-flight request's objects to the old generation
// (measured on getEndpoint: 40 → 64 µs of CPU per request, 38 full collections in 10 s; see
// BENCHMARKS.md, twenty-first pass). A slot per connection costs nothing measurable.
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

const answering = Symbol('chatbridge.answering');
type Connection = Socket & { [answering]?: ServerResponse | undefined };

export interface ConnectionDrain {
  /** Called first for every request. */
  track(req: IncomingMessage, res: ServerResponse): void;
  /** From now on, every answer not yet begun closes its connection, and so does every connection's last answer. */
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
        if (res !== undefined && !res.headersSent) res.setHeader('Connection', 'close');
      }
    },
  };
}
