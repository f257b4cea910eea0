// An endpoint's stream (streamEndpointEvents): what it sends, on an EventStream (eventStream.ts) that
// owns the connection. Everything comes from the store: the record, or the event log read "after
// the last version sent"; the stream sends each version once, in order, and ends once its token or
// key no longer opens the endpoint.
import type { Platform } from '../domain/record.ts';
import type { EndpointEvent, EndpointStore, StoredEndpoint } from '../store/port.ts';
import { messageNumberOf } from '../store/changes.ts';
import { type EventType, formatEvent, isLarge, recordSeenBy, rowEventFor } from './endpointEvents.ts';
import { EventStream, type StreamConnection, type StreamKind } from './eventStream.ts';
import type { ResumePoint } from './resume.ts';

/** The connection (eventStream.ts), its credential asked at each look rather than at heartbeats. */
export interface EndpointStreamOptions extends Omit<StreamConnection, 'budgetKey' | 'stillAllowed'> {
  store: EndpointStore;
  endpointId: string;
  /**
   * Whether the credential the stream was opened with still opens the endpoint, as `row` reads now: checked
   * whenever the stream looks at the store, so a rotated token or key ends it.
   */
  stillAuthorized: (row: StoredEndpoint) => boolean | Promise<boolean>;
  /** The platform of the bot key that opened the stream: other platforms' webhook URLs are hidden from it. */
  platform?: Platform | undefined;
  /** What the stream counts against (EventStreams.track): its endpoint's slots (the default), or a bot key's own budget. */
  budgetKey?: string | undefined;
  resume: ResumePoint;
}

/** Starts the stream (the caller has authenticated the request) and returns at once. */
export function openEndpointStream(o: EndpointStreamOptions): void {
  const { streams, bot, req, res, logger } = o;
  EventStream.open({ streams, budgetKey: o.budgetKey ?? o.endpointId, bot, req, res, logger }, new EndpointKind(o));
}

class EndpointKind implements StreamKind {
  readonly context: { endpoint: string };
  private readonly o: EndpointStreamOptions;
  /** The version of the last event sent; undefined until the first (a fresh or unknown start). */
  private last: number | undefined;
  /** Bytes of the events read from the log and not yet written. */
  private unsentBytes = 0;

  constructor(o: EndpointStreamOptions) {
    this.o = o;
    this.context = { endpoint: o.endpointId };
    this.last = o.resume.kind === 'after' ? o.resume.version : undefined;
  }

  subscribe(wake: () => void): () => void {
    return this.o.streams.feed.subscribe(this.o.endpointId, wake);
  }

  /** Looks start in turns of the event loop (turns.ts): other requests are served between two turns. */
  turn(): Promise<void> {
    return this.o.streams.turns.wait();
  }

  unsent(): number {
    return this.unsentBytes;
  }

  async look(out: EventStream): Promise<boolean> {
    const row = await this.o.store.endpoints.get(this.o.endpointId);
    if (out.ended) return false;
    if (!(await this.authorized(out, row)) || out.ended || !row) return false;
    const last = this.last;
    if (last === undefined && this.o.resume.kind === 'unknown') return this.reset(out, row, false);
    // The current record (a fresh stream), or the one version the client lacks (a live event): a
    // write commits the row and its event in one transaction with the same record and message
    // number, so the row is that event and the log need not be read; unless that change was an edit
    // or delete of a message, whose event only the log holds.
    const rowIsEvent = (row.lastChange ?? 'record') === 'record';
    if (last === undefined || (row.version === last + 1 && rowIsEvent)) {
      await this.sendRow(out, row);
      return false;
    }
    if (row.version === last) return false;
    if (row.version < last) return this.reset(out, row, false); // an ID this endpoint never issued
    return this.replay(out, row, last);
  }

  /** Whether the stream may still send: its endpoint exists and its token or key still opens it. */
  private async authorized(out: EventStream, row: StoredEndpoint | undefined): Promise<boolean> {
    if (row && (await this.o.stillAuthorized(row))) return true;
    out.end(); // deleted, or the token or key was rotated
    return false;
  }

  private async sendRow(out: EventStream, row: StoredEndpoint): Promise<void> {
    const send = () => {
      if (out.ended) return;
      out.write(rowEventFor(row, this.o.platform));
      this.last = row.version;
    };
    if (isLarge(row)) await this.o.streams.turns.run(send);
    else send();
  }

  /** A reset carrying the current record: the client starts over from it. Returns `again`. */
  private reset(out: EventStream, row: StoredEndpoint, again: boolean): boolean {
    this.send(out, row.version, 'reset', recordSeenBy(row, this.o.platform), messageNumberOf(row.state));
    return again;
  }

  private send(out: EventStream, version: number, type: EventType, recordJson: string | Uint8Array, messageNumber: number | null) {
    out.write(formatEvent(version, type, recordJson, messageNumber));
    this.last = version;
  }

  /**
   * The versions after `after` up to `row`'s, from the log. A bounded read: at most `batchSize`
   * events and `replayBatchBytes` of records (one larger record alone), each read once and sent as
   * read, so a replay costs work in proportion to what it sends and holds one read's records at most.
   */
  private async replay(out: EventStream, row: StoredEndpoint, after: number): Promise<boolean> {
    const { store, streams, endpointId } = this.o;
    const { batchSize, replayBatchBytes } = streams.settings;
    const events = await streams.turns.run(() => store.changes.eventsSince(endpointId, after, batchSize, replayBatchBytes));
    if (out.ended) return false;
    // What comes next is no longer kept: the client missed changes. Events may have committed since
    // `row` was read, so look again.
    if (events[0]?.version !== after + 1) return this.reset(out, row, true);
    if (!(await this.sendAll(out, events))) return false;
    return this.last! < row.version;
  }

  /**
   * Writes one read of the log, an event at a time, each only once the client has taken the one
   * before (beyond the socket's buffers). Returns false if the stream ended meanwhile.
   */
  private async sendAll(out: EventStream, events: EndpointEvent[]): Promise<boolean> {
    const platform = this.o.platform;
    this.unsentBytes = events.reduce((sum, e) => sum + e.json.byteLength, 0);
    try {
      for (let event = events.shift(); event !== undefined; event = events.shift()) {
        this.unsentBytes -= event.json.byteLength;
        // An edit or delete carries its message's data, no record (nothing in it is another platform's secret).
        const data = platform === undefined || event.kind !== 'record' ? event.json : recordSeenBy(event, platform);
        this.send(out, event.version, event.kind, data, event.messageNumber);
        if (!out.lagging) continue;
        const noticed = await out.keepUp();
        if (out.ended) return false;
        // A notice arrived while the client read: the token may have been rotated, or the endpoint deleted.
        if (noticed && !(await this.authorized(out, await this.o.store.endpoints.get(this.o.endpointId)))) return false;
      }
      return !out.ended;
    } finally {
      this.unsentBytes = 0;
    }
  }
}
