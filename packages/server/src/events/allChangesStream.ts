// The stream of all changes (streamAllEvents): what it sends, on an EventStream (eventStream.ts) that
// owns the connection. Everything comes from the change log, read after the last position sent;
// the reads and their events' bytes are shared by the instance's streams (changeReader.ts), and a
// bot key's stream shows only what its platform may see (botChanges.ts).
import { takesPart } from '../domain/botRights.ts';
import type { Platform } from '../domain/record.ts';
import type { EndpointStore } from '../store/port.ts';
import { changeSeenBy } from './botChanges.ts';
import { type ChangeReader, type FormattedChange, formatReset } from './changeReader.ts';
import { EventStream, type StreamConnection, type StreamKind } from './eventStream.ts';
import { type ResumePoint, resumeFrom } from './resume.ts';

/** An event ID of the stream of all changes: a position. */
const POSITION = /^([0-9]{1,32})$/;

/** Where a stream of all changes resumes: after the position in `Last-Event-ID` (or `last_event_id`; the header wins, see resume.ts). */
export function resumeAtPosition(header: string | string[] | undefined, query: number | undefined): ResumePoint {
  return resumeFrom(POSITION, header, query === undefined ? undefined : String(query));
}

/** The connection (eventStream.ts), its credential asked at every heartbeat. */
export interface AllChangesStreamOptions extends StreamConnection {
  store: EndpointStore;
  /**
   * The platform of the bot key that opened the stream: it sends only endpoints where that platform
   * takes part, their other webhooks hidden.
   */
  platform?: Platform | undefined;
  stillAllowed: () => Promise<boolean>;
  resume: ResumePoint;
}

/** Starts the stream (the caller has authorised it) and returns at once. */
export function openAllChangesStream(o: AllChangesStreamOptions): void {
  EventStream.open(o, new AllChangesKind(o));
}

class AllChangesKind implements StreamKind {
  readonly context = { stream: 'all' };
  private readonly o: AllChangesStreamOptions;
  private readonly reader: ChangeReader;
  /** The position of the last event sent; undefined until the first (a fresh or unknown start). */
  private last: number | undefined;

  constructor(o: AllChangesStreamOptions) {
    this.o = o;
    // Made before the stream subscribes to the feed: the reader counts each notice first (changeReader.ts).
    this.reader = o.streams.allChanges(o.store);
    this.last = o.resume.kind === 'after' ? o.resume.version : undefined;
  }

  subscribe(wake: () => void): () => void {
    return this.o.streams.feed.subscribeAll(wake);
  }

  /** One read from `last`: writes what it returned; true when more may follow at once. */
  async look(out: EventStream): Promise<boolean> {
    if (this.last === undefined) {
      // A fresh start (or an ID that is no position): a reset at the newest position says so.
      const { newest } = await this.reader.read(Number.MAX_SAFE_INTEGER);
      return !out.ended && this.startOver(out, newest);
    }
    const batch = await this.reader.read(this.last);
    if (out.ended) return false;
    if (batch.missed) return this.startOver(out, batch.newest);
    let last = this.last;
    for (const change of batch.changes) {
      const bytes = this.o.platform === undefined ? change.bytes : await this.seenByBot(change, this.o.platform);
      if (out.ended) return false;
      if (bytes) out.write(bytes);
      this.last = last = change.position;
      if (out.lagging) {
        await out.keepUp();
        if (out.ended) return false;
      }
    }
    return !batch.current || last < batch.newest;
  }

  /** A reset with no endpoint: the client starts over at `position`. */
  private startOver(out: EventStream, position: number): true {
    out.write(formatReset(position, null));
    this.last = position;
    return true;
  }

  /**
   * A change as the bot stream sends it (null: not at all); a reset of one endpoint, or an edit or
   * delete of one of its messages, only if the platform takes part there now.
   */
  private async seenByBot(change: FormattedChange, platform: Platform): Promise<Buffer | null> {
    const seen = changeSeenBy(change, platform);
    if (seen !== undefined) return seen;
    const row = await this.o.store.endpoints.get(change.entry.endpointId);
    return row && takesPart(row.record, platform) ? change.bytes : null;
  }
}
