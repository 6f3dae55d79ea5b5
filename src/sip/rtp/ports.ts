// RTP port allocation from a configured range (PARLEY_RTP_PORTS). Each call takes an even
// port for RTP and the odd one above it for RTCP (RFC 3550 §11); a pair is never handed
// out twice while in use, and a port someone else holds is skipped.
import dgram from 'node:dgram';
import { isIP } from 'node:net';

export interface PortRange {
  min: number;
  max: number;
}

export class RtpPortsExhaustedError extends Error {
  override name = 'RtpPortsExhaustedError';
}

/** "40000-40999" -> { min: 40000, max: 40999 }; throws on anything else. */
export function parsePortRange(text: string): PortRange {
  const m = /^\s*(\d{1,5})\s*-\s*(\d{1,5})\s*$/.exec(text);
  const min = Number(m?.[1]);
  const max = Number(m?.[2]);
  if (!m || min < 1024 || max > 65535 || max - min < 1) throw new RangeError(`invalid RTP port range ${JSON.stringify(text)} (expected e.g. 40000-40999)`);
  return { min, max };
}

export interface PortLease {
  port: number;
  rtp: dgram.Socket;
  rtcp: dgram.Socket;
  release(): void;
}

function bind(socket: dgram.Socket, port: number, host: string): Promise<boolean> {
  return new Promise((resolve) => {
    const onError = (): void => resolve(false);
    socket.once('error', onError);
    socket.bind({ port, address: host, exclusive: true }, () => {
      socket.off('error', onError);
      resolve(true);
    });
  });
}

export class RtpPortPool {
  readonly #inUse = new Set<number>();
  #cursor: number;
  readonly #first: number;
  readonly #pairs: number;

  constructor(readonly range: PortRange, readonly host: string) {
    this.#first = range.min % 2 === 0 ? range.min : range.min + 1;
    this.#pairs = Math.floor((range.max - this.#first + 1) / 2);
    if (this.#pairs < 1) throw new RangeError('the RTP port range holds no even/odd pair');
    this.#cursor = 0;
  }

  get inUse(): number {
    return this.#inUse.size;
  }

  /** Binds the next free pair; rotating through the range so a port just freed rests a while. */
  async allocate(): Promise<PortLease> {
    const family = isIP(this.host) === 6 ? 'udp6' : 'udp4';
    for (let tried = 0; tried < this.#pairs; tried++) {
      const port = this.#first + 2 * this.#cursor;
      this.#cursor = (this.#cursor + 1) % this.#pairs;
      if (this.#inUse.has(port)) continue;
      this.#inUse.add(port);
      const rtp = dgram.createSocket(family);
      const rtcp = dgram.createSocket(family);
      if ((await bind(rtp, port, this.host)) && (await bind(rtcp, port + 1, this.host))) {
        let released = false;
        const release = (): void => {
          if (released) return;
          released = true;
          for (const s of [rtp, rtcp]) {
            try {
              s.close();
            } catch {
              // already closed
            }
          }
          this.#inUse.delete(port);
        };
        return { port, rtp, rtcp, release };
      }
      for (const s of [rtp, rtcp]) {
        try {
          s.close();
        } catch {
          // never bound
        }
      }
      this.#inUse.delete(port);
    }
    throw new RtpPortsExhaustedError(`no free RTP port pair in ${this.range.min}-${this.range.max}`);
  }
}
