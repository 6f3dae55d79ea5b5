/**
 * A growable ring of frames with their tag and the time each was queued. Typed arrays and
 * reused slots: queueing and sending a frame allocate nothing once the ring has grown.
 */
export class FrameQueue<F> {
  private frames: (F | undefined)[];
  private tags: (string | undefined)[];
  private queuedAt: Float64Array;
  private head = 0;
  private count = 0;

  constructor(capacity = 64) {
    this.frames = new Array<F | undefined>(capacity);
    this.tags = new Array<string | undefined>(capacity);
    this.queuedAt = new Float64Array(capacity);
  }

  get length(): number {
    return this.count;
  }

  push(frame: F, tag: string | undefined, at: number): void {
    if (this.count === this.frames.length) this.grow();
    const slot = (this.head + this.count) % this.frames.length;
    this.frames[slot] = frame;
    this.tags[slot] = tag;
    this.queuedAt[slot] = at;
    this.count++;
  }

  /** Puts a frame back in front of the others (a pause takes back what the peer had not played). */
  unshift(frame: F, tag: string | undefined, at: number): void {
    if (this.count === this.frames.length) this.grow();
    this.head = (this.head - 1 + this.frames.length) % this.frames.length;
    this.frames[this.head] = frame;
    this.tags[this.head] = tag;
    this.queuedAt[this.head] = at;
    this.count++;
  }

  /** When the oldest frame was queued (only when there is one). */
  firstQueuedAt(): number {
    return this.queuedAt[this.head] as number;
  }

  firstTag(): string | undefined {
    return this.tags[this.head];
  }

  /** Removes and returns the oldest frame. */
  shift(): F {
    const frame = this.frames[this.head] as F;
    this.frames[this.head] = undefined;
    this.tags[this.head] = undefined;
    this.head = (this.head + 1) % this.frames.length;
    this.count--;
    return frame;
  }

  clear(): void {
    this.frames.fill(undefined);
    this.tags.fill(undefined);
    this.head = 0;
    this.count = 0;
  }

  private grow(): void {
    const size = this.frames.length * 2;
    const frames = new Array<F | undefined>(size);
    const tags = new Array<string | undefined>(size);
    const queuedAt = new Float64Array(size);
    for (let i = 0; i < this.count; i++) {
      const from = (this.head + i) % this.frames.length;
      frames[i] = this.frames[from];
      tags[i] = this.tags[from];
      queuedAt[i] = this.queuedAt[from] as number;
    }
    this.frames = frames;
    this.tags = tags;
    this.queuedAt = queuedAt;
    this.head = 0;
  }
}
