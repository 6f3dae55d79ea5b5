import type { AudioFormat } from '../../voice/audio/format.ts';

/**
 * The media side of a call's connection: what a voice pipeline needs from a transport (the call
 * WebSocket, Twilio Media Streams, a SIP call's RTP). A new transport implements this and the
 * JSON frames of `CallTransport`, and gets the whole pipeline.
 */
export interface AudioLink {
  /** What the peer sends, and wants back. */
  readonly format: AudioFormat;
  /** 20 ms frames the peer buffers ahead of playing: a few for WebSocket clients and for RTP (whose media thread paces them). */
  readonly lead: number;
  /** One 20 ms frame of the assistant's voice, in `format`; `startsRun` on the first after a silence. */
  sendFrame(frame: Buffer, startsRun?: boolean): void;
  /** Barge-in: the peer should drop what it has buffered and not yet played. */
  flushPeer(): void;
  /**
   * The caller's audio, in `format`, chunked as it arrives; on a timed link (timeline.ts) `at`
   * is where the chunk starts on the call's timeline.
   */
  onAudio(listener: (chunk: Buffer, at?: number) => void): void;
}

/** Bytes in one 20 ms frame of a format. */
export function frameBytes(format: AudioFormat): number {
  const samples = format.sampleRate / 50;
  return format.encoding === 'pcm_s16le' ? samples * 2 : samples;
}

/** What silence is in a format: zero samples for PCM, 0xFF for mu-law, 0xD5 for A-law. */
export function silence(format: AudioFormat): number {
  return format.encoding === 'mulaw' ? 0xff : format.encoding === 'alaw' ? 0xd5 : 0;
}
