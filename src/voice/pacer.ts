import { LatenessHistogram, type LatenessStats } from './lateness.ts';
import { Output } from './paced-output.ts';
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
  /** The transport's send (a WebSocket message, an RTP packet); `startsRun` on the first frame after the peer ran dry. */
  send(frame: F, startsRun: boolean): void;
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
  /**
   * The caller may be interrupting: nothing more is sent until resume(), and the frames sent but
   * not yet played (the lead the peer buffers, which the caller of pause() flushes there) are
   * taken back to the front of the queue, so a resume plays on from what the caller last heard.
   */
  pause(): void;
  /** Sending goes on after a pause, from the first frame the caller did not hear. */
  resume(): void;
  readonly paused: boolean;
  /** Barge-in: drops everything queued, reporting each tag not yet fully played. */
  clear(): ClearReport;
  /** Ms of `tag` sent so far, until the tag is reported played or cut. */
  playedMs(tag: string): number;
  readonly queuedFrames: number;
  close(): void;
}

export class Pacer {
  readonly frameMs: number;
  private readonly outputs = new Set<Output<unknown>>();
  private readonly lateness = new LatenessHistogram();
  private timer: unknown = null;
  private origin = 0;
  /** Grid positions are counted in whole ticks from `origin`, so no float error piles up. */
  private lastTick = -1;

  constructor(readonly clock: PacerClock, options: { frameMs?: number } = {}) {
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
