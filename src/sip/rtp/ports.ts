// RTP port allocation from a configured range (PARLEY_RTP_PORTS). Each call takes an even
// port for RTP and the odd one above it for RTCP (RFC 3550 §11), chosen at random in the range
// so that the next call's port cannot be guessed from the last one's; a pair is never handed
// out twice while in use, and a port someone else holds is skipped. The sockets live on the
// pool's media thread (media-thread.ts).
import { randomInt } from 'node:crypto';
import { isIP } from 'node:net';
import type { PortRange } from '../../config.ts';
import { silentLog, type SipLogger } from '../log.ts';
import { MediaThread, RtpFigures, type RtpLateness, type MediaSocketHandlers, type Pacing } from './media-thread.ts';

export class RtpPortsExhaustedError extends Error {
  override name = 'RtpPortsExhaustedError';
}

/** One call's port pair, its sockets on the media thread. */
export interface PortLease {
  port: number;
  /** An RTP packet to the paced queue (see MediaThread.sendRtp). */
  sendRtp(packet: Buffer, port: number, address: string, pacing: Pacing): void;
  sendRtcp(packet: Buffer, port: number, address: string, sent?: () => void): void;
  /** Drops the RTP packets still queued. */
  flush(): void;
  /** Resolves once every RTP packet handed over so far has gone out. */
  drained(): Promise<void>;
  /** Closes the sockets once what was handed over before has left them. */
  release(): void;
}

export class RtpPortPool {
  readonly #inUse = new Set<number>();
  readonly #first: number;
  readonly #pairs: number;
  /** Started with the first call, so a process that places none runs no thread. */
  #thread: Promise<MediaThread> | null = null;
  readonly #figures = new RtpFigures();

  constructor(readonly range: PortRange, readonly host: string, private readonly log: SipLogger = silentLog) {
    this.#first = range.min % 2 === 0 ? range.min : range.min + 1;
    this.#pairs = Math.floor((range.max - this.#first + 1) / 2);
    if (this.#pairs < 1) throw new RangeError('the RTP port range holds no even/odd pair');
  }

  get inUse(): number {
    return this.#inUse.size;
  }

  /** The media thread, started on first use. */
  #started(): Promise<MediaThread> {
    this.#thread ??= MediaThread.start(this.#figures, (error) => {
      this.log.warn({ err: error?.message }, 'the RTP media thread stopped; the next call starts a new one');
      this.#thread = null;
    }).then((thread) => {
      const priority = thread.priorityRaised ? 'raised (nice -10)' : 'as the process (raising it needs root or CAP_SYS_NICE)';
      this.log.info({ priorityRaised: thread.priorityRaised }, `RTP media thread started, its priority ${priority}`);
      return thread;
    }, (error: unknown) => {
      this.#thread = null; // the next call tries again
      throw error;
    });
    return this.#thread;
  }

  /** Binds a free pair: from a random place in the range, the first free one after it. */
  async allocate(handlers: MediaSocketHandlers): Promise<PortLease> {
    const family = isIP(this.host) === 6 ? 'udp6' : 'udp4';
    const thread = await this.#started();
    const start = randomInt(this.#pairs);
    for (let tried = 0; tried < this.#pairs; tried++) {
      const port = this.#first + 2 * ((start + tried) % this.#pairs);
      if (this.#inUse.has(port)) continue;
      this.#inUse.add(port);
      const id = await thread.open(port, this.host, family, handlers);
      if (id === null) {
        this.#inUse.delete(port);
        continue;
      }
      let released = false;
      return {
        port,
        sendRtp: (packet, to, address, pacing) => thread.sendRtp(id, packet, to, address, pacing),
        sendRtcp: (packet, to, address, sent) => thread.sendRtcp(id, packet, to, address, sent),
        flush: () => thread.flush(id),
        drained: () => thread.drained(id),
        release: () => {
          if (released) return;
          released = true;
          thread.close(id);
          this.#inUse.delete(port);
        },
      };
    }
    throw new RtpPortsExhaustedError(`no free RTP port pair in ${this.range.min}-${this.range.max}`);
  }

  /** How late the media thread sent frames, since the pool was made. */
  stats(): RtpLateness {
    return this.#figures.stats();
  }

  /** Stops the media thread (every lease's sockets close with it). */
  async close(): Promise<void> {
    const thread = this.#thread;
    this.#thread = null;
    await (await thread)?.stop();
  }
}
