// Sending key presses as RFC 4733 events: one at a time, queued, each paced at 20 ms
// on its own timer (the events are a short burst beside the caller-paced audio). While
// any is queued or playing, the session holds audio back, as RFC 4733 §2.5.1.2 suggests.
import { buildDtmfPayload, dtmfPackets } from './dtmf.ts';
import { Pacer } from './pacer.ts';

export interface DtmfOutput {
  now: () => number;
  /** The telephone-event payload type, or null when the far end has none. */
  payloadType(): number | null;
  closed(): boolean;
  /** The media timestamp the event starts at. */
  timestamp(): number;
  /** Moves the media timestamp past the event, so audio that follows is later in time. */
  advanceTo(timestamp: number): void;
  send(payloadType: number, timestamp: number, marker: boolean, payload: Buffer): void;
}

export class DtmfSender {
  #queue: Promise<void> = Promise.resolve();
  #pending = 0;

  constructor(private readonly out: DtmfOutput, private readonly frameMs: number) {}

  get active(): boolean {
    return this.#pending > 0;
  }

  send(digit: string, durationMs: number): Promise<void> {
    const packets = dtmfPackets(digit, durationMs);
    const run = async (): Promise<void> => {
      const pt = this.out.payloadType();
      if (this.out.closed() || pt === null) throw new Error('the far end accepts no telephone-events');
      const start = this.out.timestamp();
      await new Promise<void>((resolve) => {
        let i = 0;
        const pacer = new Pacer(this.frameMs, () => {
          const e = packets[i];
          if (!e || this.out.closed()) {
            pacer.stop();
            return resolve();
          }
          this.out.send(pt, start, i === 0, buildDtmfPayload(e));
          i += 1;
        }, this.out.now);
        pacer.start();
      });
      this.out.advanceTo((start + (packets.at(-1)?.duration ?? 0)) >>> 0);
    };
    this.#pending += 1;
    const next = this.#queue.then(run).finally(() => (this.#pending -= 1));
    this.#queue = next.catch(() => undefined);
    return next;
  }
}
