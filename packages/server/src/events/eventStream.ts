// One text/event-stream response, from its headers to its end, whatever its kind: the headers, HEAD,
// the heartbeat, waiting for a slow client (and the slow streams' budget meanwhile), the cut-off of
// a client that takes nothing, the place among the instance's open streams, and ending. What it
// sends comes from its kind (StreamKind: endpointStream.ts, allChangesStream.ts), which reads the
// store from its own position. The change feed only says when to look: whatever notifications
// arrive, late, twice or not at all, a look sends what the client lacks, and each heartbeat looks
// too, which bounds how long a lost notification can delay an event.
import type { Request, Response } from 'express';
import type { Logger } from '../logger.ts';
import { type SlowStream, type SlowStreamBudget, slowStreamOf, waitForDrain } from './slowStreams.ts';
import type { EventStreams } from './streams.ts';

const HEARTBEAT = ': heartbeat\n\n';

/** What one stream sends, and from where it reads it; the EventStream it is given writes it. */
export interface StreamKind {
  /** What names the stream in the logs. */
  readonly context: Record<string, unknown>;
  /** Subscribes `wake` to the change notices the stream follows; returns the unsubscribe. */
  subscribe(wake: () => void): () => void;
  /** Waited for before each look, where looks take turns with other work (turns.ts). */
  turn?(): Promise<void>;
  /** One look: writes what the client lacks to `stream`. Returns true to look again at once. */
  look(stream: EventStream): Promise<boolean>;
  /** Bytes read and not yet written: the slow streams' budget counts them with what the socket holds. */
  unsent?(): number;
}

/** The connection a stream is sent on, and what it counts against. */
export interface StreamConnection {
  streams: EventStreams;
  /** The key the stream counts under (EventStreams.track). */
  budgetKey: string;
  /** The bot whose key opened the stream, if one did: rotating or deleting that key ends it. */
  bot?: string | undefined;
  /**
   * Whether the credential the stream was opened with still opens it, asked at every heartbeat; a
   * kind whose looks ask it leaves this out.
   */
  stillAllowed?: (() => Promise<boolean>) | undefined;
  req: Request;
  res: Response;
  /** For failures; the request's own logger (`req.log`) is preferred when there is one. */
  logger: Logger;
}

export class EventStream {
  private readonly res: Response;
  private readonly kind: StreamKind;
  private readonly log: Logger;
  private readonly stallMs: number;
  private isEnded = false;
  /** A notice (or a look) asked for another look that has not begun yet. */
  private dirty = true;
  private pumping = false;
  /** Since when the stream has waited for its client to take what was written (undefined: not waiting). */
  private stalledSince: number | undefined;
  /** This stream as the process-wide budget of slow streams sees it. */
  private readonly slow: SlowStream;
  private readonly budget: SlowStreamBudget;
  private readonly stillAllowed: StreamConnection['stillAllowed'];
  private readonly unsubscribe: () => void;
  private readonly untrack: () => void;
  private readonly heartbeat: NodeJS.Timeout;

  /** Answers the request with the stream of `kind` (the caller has authorised it); returns at once. */
  static open(c: StreamConnection, kind: StreamKind): void {
    if (startResponse(c.res, c.streams.settings.retryMs)) new EventStream(c, kind);
  }

  private constructor(c: StreamConnection, kind: StreamKind) {
    const { streams, res } = c;
    this.res = res;
    this.kind = kind;
    this.log = c.req.log ?? c.logger;
    this.stallMs = streams.settings.stallMs;
    this.budget = streams.slow;
    this.slow = slowStreamOf(res, streams.slow, this.log, kind.context, this.end, () => kind.unsent?.() ?? 0);
    this.unsubscribe = kind.subscribe(this.wake);
    this.untrack = streams.track(this.end, c.budgetKey, c.bot);
    this.stillAllowed = c.stillAllowed;
    this.heartbeat = setInterval(this.beat, streams.settings.heartbeatMs);
    res.on('close', this.end);
    // The client may have gone while the request was being authorised: 'close' has fired already.
    if (streams.closed || res.destroyed || !res.socket || res.socket.destroyed) this.end();
    else void this.pump();
  }

  /** True once the stream has ended: a kind's look stops writing. */
  get ended(): boolean {
    return this.isEnded;
  }

  /** True while the client has not taken what was written: write nothing more before keepUp. */
  get lagging(): boolean {
    return this.res.writableNeedDrain;
  }

  /** Writes one event (or more), whole: an event's bytes are never split between two writes. */
  write(bytes: Buffer): void {
    this.res.write(bytes);
  }

  /**
   * A slow client: waits until what was written has gone out (nothing more is queued for a socket
   * whose write() returned false; meanwhile the stream counts against the slow streams' budget).
   * True when a change notice arrived meanwhile: what was looked at before may have changed.
   */
  async keepUp(): Promise<boolean> {
    const before = this.dirty;
    this.dirty = false;
    await this.drained();
    const noticed = this.dirty;
    this.dirty ||= before;
    return noticed;
  }

  /**
   * Ends the stream (once): gives back its subscription, its heartbeat, its place among the open
   * streams and its charge on the slow streams' budget, and ends the response.
   */
  readonly end = (): void => {
    if (this.isEnded) return;
    this.isEnded = true;
    clearInterval(this.heartbeat);
    this.unsubscribe();
    this.untrack();
    this.budget.resumed(this.slow);
    if (!this.res.writableEnded) this.res.end();
  };

  private readonly wake = (): void => {
    this.dirty = true;
    void this.pump();
  };

  private drained(): Promise<void> {
    return waitForDrain(
      this.res,
      this.budget,
      this.slow,
      () => this.isEnded,
      (since) => (this.stalledSince = since),
    );
  }

  /** Looks while anything asks for a look; one pump at a time per stream. */
  private async pump(): Promise<void> {
    if (this.pumping || this.isEnded) return;
    this.pumping = true;
    try {
      while (this.dirty && !this.isEnded) {
        if (this.kind.turn) {
          await this.kind.turn();
          if (this.isEnded) break;
        }
        this.dirty = false;
        if (await this.kind.look(this)) this.dirty = true;
        await this.drained();
      }
    } catch (err) {
      // The store failed: end the stream; the client reconnects and resumes from its last event.
      this.log.warn({ err, ...this.kind.context }, 'event stream ended: the store failed');
      this.end();
    } finally {
      this.pumping = false;
    }
  }

  private readonly beat = (): void => {
    if (this.stalledSince !== undefined) {
      if (Date.now() - this.stalledSince >= this.stallMs) {
        this.res.destroy(); // what it holds is dropped with the socket; a live client resumes from its last event
        this.end();
        return;
      }
      // Not written while the client has not taken what was: the queued data keeps proxies from
      // timing out as well, and nothing more is queued for a socket that takes nothing.
    } else {
      this.res.write(HEARTBEAT);
    }
    // A look also catches anything a lost notification hid (and, for the kinds that check the
    // credential at their looks, a rotated token or key).
    if (!this.stillAllowed) this.wake();
    else this.stillAllowed().then((allowed) => (allowed ? this.wake() : this.end()), this.wake);
  };
}

/**
 * The stream's headers and its `retry:` field; false for HEAD, answered with the headers alone (no
 * stream behind a body that cannot be sent).
 */
function startResponse(res: Response, retryMs: number): boolean {
  res.status(200);
  res.setHeader('Content-Type', 'text/event-stream');
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('X-Accel-Buffering', 'no');
  // A stream ends for good reasons only (client gone, token revoked, shutdown), and its client opens
  // a new connection anyway: closing this one then means shutdown never waits on an idle keep-alive.
  res.setHeader('Connection', 'close');
  if (res.locals.head === true) {
    res.end();
    return false;
  }
  res.flushHeaders();
  res.write(`retry: ${retryMs}\n\n`);
  return true;
}
