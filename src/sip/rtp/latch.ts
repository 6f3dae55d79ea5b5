// Which source a call's RTP (or RTCP) is taken from, and where ours goes: symmetric RTP (RFC
// 4961), latched only onto what the call's signalling names, as rtpengine's "strict source"
// after its learning phase. Docs/sip.md, "Latching", states the rule:
//
// - The address the SDP names is accepted from any port (a NAT that keeps the address may change
//   the port); the first packet from it latches, and we send to where it came from.
// - When the SDP address cannot be where the media comes from (the egress policy refuses it, or
//   it is private while the signalling came from a public address: a phone behind NAT naming its
//   LAN address), the address the signalling came from is learned too, but only within
//   LEARN_WINDOW_MS of the SDP taking effect.
// - Once latched, only the exact address and port of the SDP may take over; nothing else moves
//   the stream until a new SDP (a re-INVITE) says so. Every other source is dropped: never heard,
//   never sent to, however long the latched one stays silent (phones with DTX go quiet for seconds).
import { checkAddress, parseAllowList } from '../../egress/policy.ts';

export interface Address {
  address: string;
  port: number;
}

/** How long after an SDP takes effect the signalling's address may still be learned. */
export const LEARN_WINDOW_MS = 3000;

const same = (a: Address | null, address: string, port: number): boolean => a !== null && a.address === address && a.port === port;

const NO_EXCEPTIONS = parseAllowList(undefined);
const isPublic = (ip: string): boolean => checkAddress(ip, NO_EXCEPTIONS).allowed;

/**
 * The address to learn from besides the SDP's, or null: the signalling's source when the SDP's
 * address cannot be the one media comes from (`sendable` false: refused by the egress policy;
 * or private while the signalling's source is public).
 */
export function learningSource(sdpAddress: string | null, signalAddress: string | null, sendable: boolean): string | null {
  if (signalAddress === null || sdpAddress === null || signalAddress === sdpAddress) return null;
  return !sendable || (!isPublic(sdpAddress) && isPublic(signalAddress)) ? signalAddress : null;
}

export class Latch {
  #expected: Address | null = null;
  #sendable = false;
  #learnFrom: string | null = null;
  #learnUntil = 0;
  #latched: Address | null = null;
  #onHold = false;

  constructor(private readonly now: () => number) {}

  /** Where packets go: the latched source, else what the SDP said (null on hold, or when we may not send there). */
  get target(): Address | null {
    if (this.#onHold) return null;
    return this.#latched ?? (this.#sendable ? this.#expected : null);
  }

  /**
   * What an SDP said (null: on hold, c=0.0.0.0). The same address again (a session refresh) keeps
   * the latch; a new one starts over. Until something is latched, each SDP restarts the window.
   */
  expect(sdp: Address | null, options: { sendable: boolean; learnFrom: string | null }): void {
    if (sdp === null) {
      this.#onHold = true;
      return;
    }
    const unchanged = this.#expected !== null && same(this.#expected, sdp.address, sdp.port);
    this.#onHold = false;
    this.#expected = sdp;
    this.#sendable = options.sendable;
    this.#learnFrom = options.learnFrom;
    if (!unchanged) this.#latched = null;
    if (!this.#latched) this.#learnUntil = this.now() + LEARN_WINDOW_MS;
  }

  /** Whether a packet from this source belongs to the stream (latching onto it when it may). */
  accept(address: string, port: number): boolean {
    if (same(this.#latched, address, port)) return true;
    const expected = this.#expected;
    if (this.#onHold || expected === null) return false;
    // The exact address and port the SDP names: what the signalling said, always followed.
    if (same(expected, address, port)) return this.#latch(address, port);
    if (this.#latched) return false;
    if (address === expected.address) return this.#latch(address, port);
    if (address === this.#learnFrom && this.now() <= this.#learnUntil) return this.#latch(address, port);
    return false;
  }

  #latch(address: string, port: number): true {
    this.#latched = { address, port };
    return true;
  }
}
