/**
 * A TEST-ONLY call transport with CallControl: it keeps the frames the session sends and every
 * transfer / DTMF request, in one ordered list of events, and answers them as the test scripts.
 * It stands in for the SIP transport (built elsewhere) to exercise the session's side of the seam.
 */
import type { ServerFrame } from '../../../src/calls/frames.ts';
import { sipTransportInfo, type CallControl, type CallTransport } from '../../../src/calls/transports/transport.ts';

export type ControlEvent = { frame: ServerFrame } | { transfer: string } | { sendDtmf: string } | { closed: true };

export class TestOnlyControlTransport implements CallTransport {
  readonly info = sipTransportInfo('+4930555000', '+4917000111');
  readonly events: ControlEvent[] = [];
  /** What the next transfer answers (or throws). */
  transferAnswer: () => Promise<{ ok: true } | { ok: false; reason: string }> = async () => ({ ok: true });
  /** What the next sendDtmf does. */
  dtmfAnswer: () => Promise<void> = async () => {};
  private readonly waiters = new Set<() => void>();

  readonly control: CallControl = {
    transfer: (destination) => {
      this.push({ transfer: destination });
      return this.transferAnswer();
    },
    sendDtmf: (digits) => {
      this.push({ sendDtmf: digits });
      return this.dtmfAnswer();
    },
  };

  send(frame: ServerFrame): void {
    this.push({ frame });
  }

  close(): void {
    this.push({ closed: true });
  }

  get frames(): ServerFrame[] {
    return this.events.flatMap((e) => ('frame' in e ? [e.frame] : []));
  }

  /** Resolves with the first frame of this type (that `match` accepts); fails after timeoutMs. */
  nextFrame<T extends ServerFrame['type']>(
    type: T, match: (frame: Extract<ServerFrame, { type: T }>) => boolean = () => true, timeoutMs = 5000,
  ): Promise<Extract<ServerFrame, { type: T }>> {
    return new Promise((resolve, reject) => {
      const look = () => {
        const found = this.frames.find((f) => f.type === type && match(f as Extract<ServerFrame, { type: T }>));
        if (!found) return;
        this.waiters.delete(look);
        clearTimeout(timer);
        resolve(found as Extract<ServerFrame, { type: T }>);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(look);
        reject(new Error(`no ${type} frame; frames: ${JSON.stringify(this.frames)}`));
      }, timeoutMs);
      this.waiters.add(look);
      look();
    });
  }

  private push(event: ControlEvent): void {
    this.events.push(event);
    for (const wake of [...this.waiters]) wake();
  }
}
