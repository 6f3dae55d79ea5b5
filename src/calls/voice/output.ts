import { createEncoder, type AudioEncoder } from '../../voice/audio/format.ts';
import type { ClearReport, PacedOutput, Pacer } from '../../voice/pacer.ts';
import { frameBytes, silence, type AudioLink } from './link.ts';

export interface VoiceOutputEvents {
  /** The first frame of `tag` went out to the peer (`at`: performance.now()). */
  firstFrame(tag: string, at: number): void;
  /** Every frame of an ended tag went out (at once when it had none). */
  played(tag: string): void;
}

interface Frame {
  bytes: Buffer;
  /** Set on the first frame of a tag. */
  first: string | null;
}

interface TagState {
  encoder: AudioEncoder;
  rate: number;
  /** Encoded bytes short of a whole frame, waiting for more audio. */
  carry: Buffer;
  frames: number;
}

/**
 * The assistant's voice on its way out, shared by both kinds of voice: PCM at any rate, in
 * pieces of any size, is converted to the link's format, cut into 20 ms frames and sent on the
 * process's pacer. Audio is tagged (a sentence of the TTS pipeline, an item of a realtime
 * model), so the caller of `clear()` learns how much of each tag went out.
 */
export class VoiceOutput {
  private readonly output: PacedOutput<Frame>;
  private readonly tags = new Map<string, TagState>();
  private readonly frameSize: number;
  private readonly fill: number;

  constructor(private readonly link: AudioLink, pacer: Pacer, private readonly events: VoiceOutputEvents) {
    this.frameSize = frameBytes(link.format);
    this.fill = silence(link.format);
    this.output = pacer.createOutput<Frame>({
      lead: link.lead,
      send: (frame, startsRun) => {
        link.sendFrame(frame.bytes, startsRun);
        if (frame.first !== null) events.firstFrame(frame.first, pacer.now());
      },
      onPlayed: (tag) => events.played(tag),
    });
  }

  /** More audio of `tag`. */
  write(tag: string, pcm: Int16Array, sampleRate: number): void {
    let state = this.tags.get(tag);
    if (!state || state.rate !== sampleRate) {
      state = { encoder: createEncoder(sampleRate, this.link.format), rate: sampleRate, carry: state?.carry ?? Buffer.alloc(0), frames: state?.frames ?? 0 };
      this.tags.set(tag, state);
    }
    const bytes = Buffer.concat([state.carry, state.encoder.encode(pcm)]);
    let offset = 0;
    for (; offset + this.frameSize <= bytes.length; offset += this.frameSize) this.enqueue(tag, state, bytes.subarray(offset, offset + this.frameSize));
    state.carry = bytes.subarray(offset);
  }

  /** No more audio of `tag`: its last part frame is filled with silence, and `played` fires once it has gone out. */
  end(tag: string): void {
    const state = this.tags.get(tag);
    this.tags.delete(tag);
    if (state?.carry.length) this.enqueue(tag, state, Buffer.concat([state.carry, Buffer.alloc(this.frameSize - state.carry.length, this.fill)]));
    if (!state?.frames) return this.events.played(tag);
    this.output.end(tag);
  }

  /** The caller may be interrupting: nothing goes out until resume(), which plays on from what was not heard (the peer's buffer is the caller's to flush). */
  pause(): void {
    this.output.pause();
  }

  resume(): void {
    this.output.resume();
  }

  get paused(): boolean {
    return this.output.paused;
  }

  /** Barge-in: drops everything queued; reports, per tag not yet played, what went out of it. */
  clear(): ClearReport {
    this.tags.clear();
    return this.output.clear();
  }

  close(): void {
    this.tags.clear();
    this.output.close();
  }

  private enqueue(tag: string, state: TagState, bytes: Buffer): void {
    this.output.enqueue({ bytes, first: state.frames === 0 ? tag : null }, tag);
    state.frames++;
  }
}

/**
 * Of each tag a barge-in cut, the ms the caller heard: what was sent, less the audio still in the
 * peer's buffer (`aheadMs`), which belongs to the latest tags sent.
 */
export function heardMs(report: ClearReport): Map<string, { heardMs: number; totalMs: number }> {
  const heard = new Map<string, { heardMs: number; totalMs: number }>();
  let ahead = report.aheadMs;
  for (const cut of [...report.cut].reverse()) {
    heard.set(cut.tag, { heardMs: Math.max(0, cut.sentMs - ahead), totalMs: cut.sentMs + cut.droppedMs });
    ahead = Math.max(0, ahead - cut.sentMs);
  }
  return heard;
}
