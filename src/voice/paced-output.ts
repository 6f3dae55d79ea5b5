import { FrameQueue } from './frame-queue.ts';
import type { ClearReport, PacedOutput, PacedOutputOptions, Pacer } from './pacer.ts';

interface TagState {
  sent: number;
  queued: number;
  ended: boolean;
}

/** A frame that went out, kept while it may still sit in the peer's buffer (a pause takes it back). */
interface Sent<F> {
  frame: F;
  tag: string | undefined;
  queuedAt: number;
}

/** One call's queue of outgoing frames, pumped by the process's Pacer on every tick. */
export class Output<F> implements PacedOutput<F> {
  private readonly queue = new FrameQueue<F>();
  private readonly tags = new Map<string, TagState>();
  private readonly lead: number;
  /** The grid tick at which the next frame sent starts playing at the peer. */
  private playhead = -Infinity;
  /** The grid tick the current run of continuous audio started at. */
  private runStart = -Infinity;
  /** The last frames sent, newest last: at most the lead and two more. */
  private recent: Sent<F>[] = [];
  private pausedNow = false;
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

  get paused(): boolean {
    return this.pausedNow;
  }

  pause(): void {
    if (this.pausedNow || this.closed) return;
    this.pausedNow = true;
    const aheadMs = Math.max(0, this.pacer.timeOf(this.playhead) - this.pacer.now());
    // Frames the peer holds but has not played (the one starting now among them): replayed on resume.
    let back = Math.min(this.recent.length, Math.floor(aheadMs / this.pacer.frameMs + 1e-9));
    for (; back > 0; back--) {
      const sent = this.recent.pop()!;
      // A tag already reported played stays played: its frames go back untagged.
      const state = sent.tag === undefined ? undefined : this.tags.get(sent.tag);
      this.queue.unshift(sent.frame, state ? sent.tag : undefined, sent.queuedAt);
      if (!state) continue;
      state.sent--;
      state.queued++;
    }
    this.recent = [];
    this.playhead = -Infinity;
  }

  resume(): void {
    this.pausedNow = false;
  }

  clear(): ClearReport {
    const now = this.pacer.now();
    const cut = [...this.tags].map(([tag, state]) => ({ tag, sentMs: state.sent * this.pacer.frameMs, droppedMs: state.queued * this.pacer.frameMs }));
    const aheadMs = Math.max(0, this.pacer.timeOf(this.playhead) - now);
    this.queue.clear();
    this.tags.clear();
    this.recent = [];
    this.playhead = -Infinity;
    this.pausedNow = false;
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
    while (this.queue.length > 0 && !this.pausedNow) {
      const available = this.pacer.tickAtOrAfter(this.queue.firstQueuedAt());
      if (this.playhead < available) {
        // The peer ran out before this frame was queued: a new run starts when it arrived.
        this.playhead = available;
        this.runStart = available;
      }
      const due = Math.max(this.playhead - this.lead, this.runStart);
      if (due > tick) return;
      const tag = this.queue.firstTag();
      const queuedAt = this.queue.firstQueuedAt();
      const frame = this.queue.shift();
      try {
        this.options.send(frame, this.playhead === this.runStart);
      } catch (error) {
        this.options.onSendError?.(error);
      }
      // Late after the tick it could first go: with a lead, a frame queued after its lead-early
      // tick was not late at all until the tick it was queued in.
      this.pacer.recordLateness(now - this.pacer.timeOf(Math.max(due, available)));
      this.playhead++;
      this.recent.push({ frame, tag, queuedAt });
      if (this.recent.length > this.lead + 2) this.recent.shift();
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
