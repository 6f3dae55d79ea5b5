// Playout buffer for G.711 (one byte per sample at 8 kHz). Packets are written at the
// sample position their RTP timestamp names, so reordering, duplicates, any ptime and
// silence suppression all fall out of the same rule; 20 ms frames are read from the
// play position, and samples that never arrived are played as silence.

export interface JitterBufferOptions {
  /** Audio held back before playout starts, and the level kept afterwards (ms). */
  depthMs: number;
  /** The G.711 byte for silence: 0xFF for PCMU, 0xD5 for PCMA. */
  silence: number;
  /** Bound on what is held, in ms; more than this ahead of the play position resets. */
  capacityMs?: number;
}

export interface JitterFrame {
  payload: Buffer;
  /** Some samples of this frame never arrived and were replaced by silence. */
  concealed: boolean;
  /** How many of its 160 samples are that silence (160: nothing was there to play). */
  missing: number;
}

export interface JitterStats {
  late: number;
  /** Frames played as silence because nothing had arrived (the buffer ran dry). */
  underruns: number;
  duplicates: number;
  concealedFrames: number;
  resets: number;
  /** Frames dropped to bring latency back down after a burst. */
  skippedFrames: number;
}

const SAMPLES_PER_MS = 8;
const slot = (position: number, capacity: number): number => ((position % capacity) + capacity) % capacity;
export const FRAME_SAMPLES = 160;
/** Frames over which the lowest buffer level is watched before latency is trimmed (0.5 s). */
const ADAPT_WINDOW = 25;

export class JitterBuffer {
  readonly #ring: Buffer;
  readonly #filled: Uint8Array;
  readonly #depth: number;
  #silence: number;
  /** Extended sample index of the next sample to play. */
  #readPos = 0;
  /** One past the highest sample written. */
  #highest = 0;
  #anchor: number | null = null;
  #lastTs = 0;
  #extended = 0;
  #playing = false;
  #started = false;
  #everPlayed = false;
  #windowPops = 0;
  #windowMin = Infinity;
  readonly stats: JitterStats = { late: 0, underruns: 0, duplicates: 0, concealedFrames: 0, resets: 0, skippedFrames: 0 };

  constructor(options: JitterBufferOptions) {
    this.#depth = Math.max(FRAME_SAMPLES, Math.round(options.depthMs * SAMPLES_PER_MS));
    const capacity = Math.max(this.#depth * 4, Math.round((options.capacityMs ?? 1000) * SAMPLES_PER_MS));
    this.#ring = Buffer.alloc(capacity, options.silence);
    this.#filled = new Uint8Array(capacity);
    this.#silence = options.silence;
  }

  /** The codec decides what silence is; set when the codec is known. */
  setSilence(byte: number): void {
    this.#silence = byte;
  }

  /** Samples waiting to be played. */
  get buffered(): number {
    return Math.max(0, this.#highest - this.#readPos);
  }

  /** A 32-bit RTP timestamp as a position that keeps counting past wrap-around. */
  #position(timestamp: number): number {
    if (this.#anchor === null) {
      this.#anchor = timestamp;
      this.#lastTs = timestamp;
      this.#extended = 0;
      return 0;
    }
    const delta = ((timestamp - this.#lastTs) | 0);
    this.#extended += delta;
    this.#lastTs = timestamp;
    return this.#extended;
  }

  #reset(position: number): void {
    this.#filled.fill(0);
    this.#readPos = position;
    this.#highest = position;
    this.#playing = false;
    this.stats.resets += 1;
  }

  push(timestamp: number, payload: Buffer): 'accepted' | 'duplicate' | 'late' {
    const capacity = this.#ring.length;
    const start = this.#position(timestamp);
    if (!this.#started) {
      this.#started = true;
      this.#readPos = start;
      this.#highest = start;
    }
    const end = start + Math.min(payload.length, capacity);
    // Far outside the window (a timestamp jump, or the far end restarted): start over there.
    if (end > this.#readPos + capacity || start < this.#readPos - capacity) this.#reset(start);
    if (end <= this.#readPos) {
      // Nothing is ahead of us and this is long gone: the sender's clock moved, follow it.
      if (this.buffered === 0 && this.#readPos - start > this.#depth) this.#reset(start);
      else {
        this.stats.late += 1;
        return 'late';
      }
    } else if (this.buffered === 0 && start > this.#readPos) {
      // The buffer ran dry (silence suppression, or the sender paused): what we would play
      // before this packet is a gap already covered by silence, so start here.
      this.#readPos = start;
    }
    let fresh = false;
    for (let pos = Math.max(start, this.#readPos); pos < end; pos++) {
      const i = slot(pos, capacity);
      if (!this.#filled[i]) fresh = true;
      this.#ring[i] = payload[pos - start] ?? this.#silence;
      this.#filled[i] = 1;
    }
    if (!fresh) {
      this.stats.duplicates += 1;
      return 'duplicate';
    }
    this.#highest = Math.max(this.#highest, end);
    return 'accepted';
  }

  /**
   * The next 20 ms; null only before playout first starts. While refilling after a reset
   * (or when nothing arrives) the frames are silence, so the listener keeps its rhythm.
   */
  pop(): JitterFrame | null {
    if (!this.#playing) {
      if (this.buffered < this.#depth) return this.#everPlayed ? this.#silenceFrame() : null;
      this.#playing = true;
      this.#everPlayed = true;
    }
    if (this.buffered === 0) {
      // Ran dry (the sender paused, or our event loop was held up while packets queued in
      // the socket). Play silence without moving on, so what is still on its way is not
      // dropped as late, and build the depth up again before resuming.
      this.#playing = false;
      return this.#silenceFrame();
    }
    this.#adapt();
    return this.#take();
  }

  /**
   * Keeps latency near the depth. A burst drains by itself, so only a level that stayed
   * more than a frame above the depth for a whole window (a sender running fast, or a
   * backlog after a stall) costs a frame, one per window; far too much is cut at once.
   */
  #adapt(): void {
    this.#windowMin = Math.min(this.#windowMin, this.buffered);
    if (++this.#windowPops >= ADAPT_WINDOW) {
      if (this.#windowMin > this.#depth + FRAME_SAMPLES) this.#skip();
      this.#windowPops = 0;
      this.#windowMin = Infinity;
    }
    while (this.buffered > this.#ring.length / 2) this.#skip();
  }

  #skip(): void {
    this.#take();
    this.stats.skippedFrames += 1;
  }

  #silenceFrame(): JitterFrame {
    this.stats.concealedFrames += 1;
    this.stats.underruns += 1;
    return { payload: Buffer.alloc(FRAME_SAMPLES, this.#silence), concealed: true, missing: FRAME_SAMPLES };
  }

  #take(): JitterFrame {
    const capacity = this.#ring.length;
    const payload = Buffer.allocUnsafe(FRAME_SAMPLES);
    let missing = 0;
    for (let k = 0; k < FRAME_SAMPLES; k++) {
      const i = slot(this.#readPos + k, capacity);
      if (this.#filled[i]) {
        payload[k] = this.#ring[i] ?? this.#silence;
        this.#filled[i] = 0;
      } else {
        payload[k] = this.#silence;
        missing += 1;
      }
    }
    this.#readPos += FRAME_SAMPLES;
    if (missing > 0) this.stats.concealedFrames += 1;
    return { payload, concealed: missing > 0, missing };
  }
}
