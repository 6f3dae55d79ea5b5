// Receiver statistics of RFC 3550 Appendix A: extended sequence numbers (A.1), loss
// (A.3) and interarrival jitter (A.8), for one incoming SSRC.

const MAX_DROPOUT = 3000;
const MAX_MISORDER = 100;
const SEQ_MOD = 0x10000;

export class ReceiveStats {
  #started = false;
  #baseSeq = 0;
  #maxSeq = 0;
  #cycles = 0;
  #badSeq = SEQ_MOD + 1;
  #received = 0;
  #expectedPrior = 0;
  #receivedPrior = 0;
  #jitter = 0;
  #lastTransit: number | null = null;

  constructor(private readonly clockRate = 8000) {}

  get received(): number {
    return this.#received;
  }

  get extendedHighest(): number {
    return this.#cycles + this.#maxSeq;
  }

  get expected(): number {
    return this.#started ? this.extendedHighest - this.#baseSeq + 1 : 0;
  }

  /** Cumulative loss: negative when duplicates were counted (RFC 3550 §6.4.1). */
  get lost(): number {
    return this.expected - this.#received;
  }

  /** Interarrival jitter in timestamp units. */
  get jitter(): number {
    return this.#jitter;
  }

  get jitterMs(): number {
    return (this.#jitter / this.clockRate) * 1000;
  }

  #init(seq: number): void {
    this.#baseSeq = seq;
    this.#maxSeq = seq;
    this.#cycles = 0;
    this.#badSeq = SEQ_MOD + 1;
    this.#received = 0;
    this.#expectedPrior = 0;
    this.#receivedPrior = 0;
  }

  /**
   * Counts one packet; false when it is a jump we do not believe yet (A.1's bad_seq).
   * `timed` false leaves jitter alone: a telephone-event repeats its start timestamp.
   */
  update(seq: number, rtpTimestamp: number, arrivalMs: number, timed = true): boolean {
    if (!this.#started) {
      this.#started = true;
      this.#init(seq);
    } else {
      const delta = (seq - this.#maxSeq + SEQ_MOD) % SEQ_MOD;
      if (delta < MAX_DROPOUT) {
        if (seq < this.#maxSeq) this.#cycles += SEQ_MOD;
        this.#maxSeq = seq;
      } else if (delta <= SEQ_MOD - MAX_MISORDER) {
        // A big jump: believe it only when the next packet follows it (the far end restarted).
        if (seq !== this.#badSeq) {
          this.#badSeq = (seq + 1) % SEQ_MOD;
          return false;
        }
        this.#init(seq);
      }
      // Otherwise a duplicate or a packet out of order: counted, nothing else changes.
    }
    this.#received += 1;
    if (!timed) return true;
    const arrival = (arrivalMs / 1000) * this.clockRate;
    const transit = arrival - rtpTimestamp;
    if (this.#lastTransit !== null) {
      let d = Math.abs(transit - this.#lastTransit);
      // A timestamp that wrapped past 2^32 is not jitter.
      if (d > 2 ** 31) d = Math.abs(d - 2 ** 32);
      this.#jitter += (d - this.#jitter) / 16;
    }
    this.#lastTransit = transit;
    return true;
  }

  /** The 8-bit fraction lost since the previous call (A.3); call once per report. */
  takeFractionLost(): number {
    const expected = this.expected;
    const expectedInterval = expected - this.#expectedPrior;
    const receivedInterval = this.#received - this.#receivedPrior;
    this.#expectedPrior = expected;
    this.#receivedPrior = this.#received;
    const lostInterval = expectedInterval - receivedInterval;
    return expectedInterval === 0 || lostInterval <= 0 ? 0 : Math.floor((lostInterval * 256) / expectedInterval);
  }
}
