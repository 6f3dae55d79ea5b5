import { FrameQueue } from './frame-queue.ts';
import { LatenessHistogram, type LatenessStats } from './lateness.ts';
import type { PacerClock } from './pacer-clock.ts';

/**
 * Real-time pacing of outgoing audio for every call of the process. One `Pacer` is created at
 * startup and passed to call sessions; its single timer ticks every frame (20 ms) while any
 * output exists and sends each output's frames when they are due. Ticks are scheduled against
 * the ideal grid (start + k·20 ms), never "now + 20", so timer delays do not add up; when the
 * event loop stalls, the next tick sends everything that fell due meanwhile and the lateness
 * statistics show it.
 *
 * An output with `lead` n may be n frames ahead of real time: 0 for RTP (the peer plays what
 * arrives), a few for WebSocket clients that buffer, so network jitter does not starve them.
 * When an output runs dry its clock restarts with the next frame (no burst to "catch up").
 */
export interface PacedOutputOptions<F> {
  /** Frames that may be sent ahead of real time. */
  lead?: number;
  /** The transport's send (a WebSocket message, an RTP packet). */
  send(frame: F): void;
  /** All frames of a tag declared with `end(tag)` have been sent. */
  onPlayed?(tag: string, sentMs: number): void;
  /** `send` threw; the frame counts as sent. */
  onSendError?(error: unknown): void;
}

export interface CutTag {
  tag: string;
  /** Of this tag, sent before the cut (with a lead, part of it may still sit in the peer's buffer). */
  sentMs: number;
  droppedMs: number;
}

export interface ClearReport {
  cut: CutTag[];
  /** How far ahead of real time the output was: sent audio the peer has not played yet. */
  aheadMs: number;
}

export interface PacedOutput<F> {
  enqueue(frame: F, tag?: string): void;
  /** No more frames will come for `tag`: `onPlayed` fires once its last frame is sent. */
  end(tag: string): void;
  /** Barge-in: drops everything queued, reporting each tag not yet fully played. */
  clear(): ClearReport;
  /** Ms of `tag` sent so far, until the tag is reported played or cut. */
  playedMs(tag: string): number;
  readonly queuedFrames: number;
  close(): void;
}

interface TagState {
  sent: number;
  queued: number;
  ended: boolean;
}

export class Pacer {
  readonly frameMs: number;
  private readonly outputs = new Set<Output<unknown>>();
  private readonly lateness = new LatenessHistogram();
  private timer: unknown = null;
  private origin = 0;
  /** Grid positions are counted in whole ticks from `origin`, so no float error piles up. */
  private lastTick = -1;

  constructor(private readonly clock: PacerClock, options: { frameMs?: number } = {}) {
    this.frameMs = options.frameMs ?? 20;
  }

  createOutput<F>(options: PacedOutputOptions<F>): PacedOutput<F> {
    const output = new Output<F>(this, options, (o) => this.remove(o as Output<unknown>));
    this.outputs.add(output as Output<unknown>);
    if (this.timer === null) {
      this.origin = this.clock.now();
      this.lastTick = -1;
      this.timer = this.clock.setTimer(0, () => this.tick());
    }
    return output;
  }

  get outputCount(): number {
    return this.outputs.size;
  }

  /** Lateness of every frame sent since the start or the last reset. */
  stats(): LatenessStats {
    return this.lateness.stats();
  }

  resetStats(): void {
    this.lateness.reset();
  }

  /** The first grid tick at or after `time`: when a frame queued then is first due. */
  tickAtOrAfter(time: number): number {
    return Math.ceil((time - this.origin) / this.frameMs - 1e-9);
  }

  /** When grid tick `tick` is ideally due. */
  timeOf(tick: number): number {
    return this.origin + tick * this.frameMs;
  }

  now(): number {
    return this.clock.now();
  }

  recordLateness(ms: number): void {
    this.lateness.record(ms);
  }

  private tick(): void {
    const now = this.clock.now();
    // The latest grid tick not after now; a timer firing a hair early still takes the next one.
    const tick = Math.max(this.lastTick + 1, Math.floor((now - this.origin) / this.frameMs));
    this.lastTick = tick;
    for (const output of this.outputs) output.pump(tick, now);
    if (this.outputs.size === 0) {
      this.timer = null;
      return;
    }
    this.timer = this.clock.setTimer(this.timeOf(tick + 1) - this.clock.now(), () => this.tick());
  }

  private remove(output: Output<unknown>): void {
    this.outputs.delete(output);
    if (this.outputs.size === 0 && this.timer !== null) {
      this.clock.clearTimer(this.timer);
      this.timer = null;
    }
  }
}

class Output<F> implements PacedOutput<F> {
  private readonly queue = new FrameQueue<F>();
  private readonly tags = new Map<string, TagState>();
  private readonly lead: number;
  /** The grid tick at which the next frame sent starts playing at the peer. */
  private playhead = -Infinity;
  /** The grid tick the current run of continuous audio started at. */
  private runStart = -Infinity;
  private closed = false;

  constructor(private readonly pacer: Pacer, private readonly options: PacedOutputOptions<F>, private readonly onClose: (output: Output<F>) => void) {
    this.lead = Math.max(0, Math.floor(options.lead ?? 0));
  }

  get queuedFrames(): number {
    return this.queue.length;
  }

  enqueue(frame: F, tag?: string): void {
    if (this.closed) return;
    this.queue.push(frame, tag, this.pacer.now());
    if (tag !== undefined) this.tag(tag).queued++;
  }

  end(tag: string): void {
    const state = this.tags.get(tag);
    if (!state) return; // nothing of it was queued, or it was already played or cut
    state.ended = true;
    if (state.queued === 0) this.played(tag, state);
  }

  clear(): ClearReport {
    const now = this.pacer.now();
    const cut = [...this.tags].map(([tag, state]) => ({ tag, sentMs: state.sent * this.pacer.frameMs, droppedMs: state.queued * this.pacer.frameMs }));
    const aheadMs = Math.max(0, this.pacer.timeOf(this.playhead) - now);
    this.queue.clear();
    this.tags.clear();
    this.playhead = -Infinity;
    return { cut, aheadMs };
  }

  playedMs(tag: string): number {
    return (this.tags.get(tag)?.sent ?? 0) * this.pacer.frameMs;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.queue.clear();
    this.tags.clear();
    this.onClose(this);
  }

  /** Sends every frame due by grid tick `tick`; `now` is when that actually happens. */
  pump(tick: number, now: number): void {
    while (this.queue.length > 0) {
      const available = this.pacer.tickAtOrAfter(this.queue.firstQueuedAt());
      if (this.playhead < available) {
        // The peer ran out before this frame was queued: a new run starts when it arrived.
        this.playhead = available;
        this.runStart = available;
      }
      const due = Math.max(this.playhead - this.lead, this.runStart);
      if (due > tick) return;
      const tag = this.queue.firstTag();
      const frame = this.queue.shift();
      try {
        this.options.send(frame);
      } catch (error) {
        this.options.onSendError?.(error);
      }
      this.pacer.recordLateness(now - this.pacer.timeOf(due));
      this.playhead++;
      if (tag !== undefined) this.sent(tag);
    }
  }

  private tag(tag: string): TagState {
    let state = this.tags.get(tag);
    if (!state) {
      state = { sent: 0, queued: 0, ended: false };
      this.tags.set(tag, state);
    }
    return state;
  }

  private sent(tag: string): void {
    const state = this.tags.get(tag);
    if (!state) return;
    state.sent++;
    state.queued--;
    if (state.ended && state.queued === 0) this.played(tag, state);
  }

  private played(tag: string, state: TagState): void {
    this.tags.delete(tag);
    this.options.onPlayed?.(tag, state.sent * this.pacer.frameMs);
  }
}
