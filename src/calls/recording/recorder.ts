import alawmulaw from 'alawmulaw';
import { createDecoder, type AudioFormat } from '../../voice/audio/format.ts';
import { samplesToBytes } from '../../voice/audio/pcm.ts';
import { CALLER_GAP_MS, type AudioTap, type AudioTimeline } from '../voice/timeline.ts';

/** Where a call's recording goes as it is made: the store seals and keeps it (the engine declares, a feature implements). */
export interface RecordingSink {
  /**
   * The next samples: stereo PCM16 little-endian, interleaved (caller left, assistant right), in
   * order. The buffer is the recorder's own, reused once this returns: copy what is kept.
   */
  write(pcm: Buffer): void;
  /** The call's audio is over; resolves once the recording is kept (it may still have to be stored away). */
  finish(summary: { bytes: number; durationMs: number }): Promise<void>;
}

export interface RecordingStore {
  /** Starts the recording of a call at this rate; writes before the store is ready wait in it. */
  open(callId: string, audio: { sampleRate: number; channels: 2 }): RecordingSink;
}

/** Written out once this much audio lies before the timeline's now (what can no longer be cut). */
const FLUSH_MS = 1_000;
/**
 * Kept back from now: the caller's chunks are placed end to end, so they may run up to
 * CALLER_GAP_MS behind the time they arrived (timeline.ts); what is written out never reaches
 * into that, or a late chunk would find its place already gone.
 */
const HOLDBACK_MS = CALLER_GAP_MS + 20;
/**
 * Held at most, whatever the timeline says: a caller who sends audio faster than real time runs
 * ahead of now, and what runs ahead is written out past this (a cut there is then not seen).
 */
const MAX_HELD_MS = 10_000;

/** A side's decoder to PCM16 at the link's own rate; its answer is only valid until its next call. */
type Decode = (chunk: Buffer) => Int16Array;

/**
 * G.711 (SIP, Twilio) decoded through a table into a buffer the side reuses: the recorder runs
 * on the main thread for every frame of every recorded call, and what it allocates per frame the
 * collector reclaims there, in pauses the calls' audio waits behind.
 */
function decoderOf(format: AudioFormat): Decode {
  if (format.encoding === 'pcm_s16le') {
    const decoder = createDecoder(format, format.sampleRate);
    return (chunk) => decoder.decode(chunk);
  }
  const law = format.encoding === 'mulaw' ? alawmulaw.mulaw : alawmulaw.alaw;
  const table = law.decode(Uint8Array.from({ length: 256 }, (_, i) => i));
  let out = new Int16Array(160);
  return (chunk) => {
    if (out.length < chunk.length) out = new Int16Array(chunk.length);
    for (let i = 0; i < chunk.length; i++) out[i] = table[chunk[i]!]!;
    return out.subarray(0, chunk.length);
  };
}

/**
 * A call's recording as it runs: both sides of a timed link (timeline.ts) into one stereo PCM16
 * stream at the link's rate, the caller left and the assistant right, silence where neither
 * sent anything. Audio is held only until it can no longer change: the assistant's frames sent
 * ahead of their time may still be cut by a barge-in, so what lies after the timeline's now
 * waits; what lies before it goes to the sink about once a second. So a call of an hour holds a
 * second or two of audio, never the hour.
 */
export class CallAudioRecorder implements AudioTap {
  private readonly rate: number;
  private readonly left: Decode;
  private readonly right: Decode;
  /** Interleaved samples from `base` (the first sample not yet written out). */
  private held = new Int16Array(0);
  private base = 0;
  /** One past the last sample written on each side (absolute). */
  private ends = [0, 0];
  private bytes = 0;
  private closed = false;

  constructor(format: AudioFormat, private readonly timeline: AudioTimeline, private readonly sink: RecordingSink) {
    this.rate = format.sampleRate;
    this.left = decoderOf(format);
    this.right = decoderOf(format);
  }

  caller(chunk: Buffer, at: number): void {
    this.place(0, this.left(chunk), at);
  }

  assistant(frame: Buffer, at: number): void {
    this.place(1, this.right(frame), at);
  }

  cut(at: number): void {
    if (this.closed) return;
    const from = Math.max(this.sample(at), this.base);
    for (let s = from; s < this.ends[1]!; s++) this.held[(s - this.base) * 2 + 1] = 0;
    this.ends[1] = Math.min(this.ends[1]!, Math.max(from, this.base));
  }

  /** The call is over: everything held goes out, and the sink is told how long the recording is. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.writeOut(Math.max(...this.ends));
    this.closed = true;
    this.held = new Int16Array(0);
    await this.sink.finish({ bytes: this.bytes, durationMs: Math.round((this.bytes / 4 / this.rate) * 1000) });
  }

  private sample(ms: number): number {
    return Math.max(0, Math.round((ms * this.rate) / 1000));
  }

  private place(channel: 0 | 1, pcm: Int16Array, at: number): void {
    if (this.closed || !pcm.length) return;
    const start = this.sample(at);
    const end = start + pcm.length;
    const skip = Math.max(0, this.base - start); // late audio before what was written out is dropped
    if (skip >= pcm.length) return;
    this.reserve(end);
    for (let i = skip; i < pcm.length; i++) this.held[(start + i - this.base) * 2 + channel] = pcm[i]!;
    this.ends[channel] = Math.max(this.ends[channel]!, end);
    const settled = this.sample(this.timeline.now() - HOLDBACK_MS);
    if (settled - this.base >= this.sample(FLUSH_MS)) this.writeOut(Math.min(settled, Math.max(...this.ends)));
    const ahead = Math.max(...this.ends) - this.base - this.sample(MAX_HELD_MS);
    if (ahead > 0) this.writeOut(this.base + ahead);
  }

  private reserve(end: number): void {
    const need = (end - this.base) * 2;
    if (need <= this.held.length) return;
    const grown = new Int16Array(Math.max(need, this.held.length * 2, this.rate * 4));
    grown.set(this.held);
    this.held = grown;
  }

  /**
   * Writes out every sample before `upTo` (silence where nothing was placed): the sink is handed
   * a view of the held samples, which it copies, and only what was placed after them moves down
   * (not the whole buffer), with nothing allocated.
   */
  private writeOut(upTo: number): void {
    const count = upTo - this.base;
    if (count <= 0) return;
    this.reserve(upTo);
    const out = samplesToBytes(this.held.subarray(0, count * 2));
    this.bytes += out.length;
    this.sink.write(out);
    const used = Math.max(upTo, ...this.ends) - this.base;
    this.held.copyWithin(0, count * 2, used * 2);
    this.held.fill(0, (used - count) * 2, used * 2);
    this.base = upTo;
  }
}
