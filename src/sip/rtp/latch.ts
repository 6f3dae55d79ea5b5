// Symmetric RTP (RFC 4961 style "latching"): send to the address the far end's packets
// come from, which is what gets through NAT, instead of the one its SDP names. We latch
// onto the first source. Another source takes over only after it has sent 5 packets in a
// row while the latched one has been silent for a second, so a stray or injected packet
// cannot hijack the stream, while a far end that really moved is followed.

export interface Address {
  address: string;
  port: number;
}

const SWITCH_AFTER_PACKETS = 5;
const SWITCH_AFTER_SILENCE_MS = 1000;

const same = (a: Address | null, address: string, port: number): boolean => a !== null && a.address === address && a.port === port;

export class Latch {
  #expected: Address | null = null;
  #latched: Address | null = null;
  #lastFromLatched = 0;
  #candidate: (Address & { count: number }) | null = null;

  constructor(private readonly now: () => number) {}

  /** Where packets go: the latched source, else what the SDP said. */
  get target(): Address | null {
    return this.#latched ?? this.#expected;
  }

  /** The SDP's address (null: on hold). A new address from a re-INVITE starts latching over. */
  expect(address: string | null, port: number): void {
    const next = address === null ? null : { address, port };
    if (next && this.#expected && same(this.#expected, next.address, next.port)) return;
    this.#expected = next;
    this.#latched = null;
    this.#candidate = null;
  }

  /** Whether a packet from this source belongs to the stream (and latch onto it). */
  accept(address: string, port: number): boolean {
    const now = this.now();
    if (!this.#latched || same(this.#latched, address, port)) {
      this.#latched ??= { address, port };
      this.#lastFromLatched = now;
      this.#candidate = null;
      return true;
    }
    if (same(this.#candidate, address, port) && this.#candidate) this.#candidate.count += 1;
    else this.#candidate = { address, port, count: 1 };
    if (this.#candidate.count >= SWITCH_AFTER_PACKETS && now - this.#lastFromLatched >= SWITCH_AFTER_SILENCE_MS) {
      this.#latched = { address, port };
      this.#lastFromLatched = now;
      this.#candidate = null;
      return true;
    }
    return false;
  }
}
