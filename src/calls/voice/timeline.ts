import type { PacerClock } from '../../voice/pacer-clock.ts';
import { frameBytes, type AudioLink } from './link.ts';

/**
 * A gap in what the caller sends longer than this is silence on the call's timeline; shorter
 * ones (network jitter, a busy event loop handing over a few frames at once) are closed up, so
 * they never shift the caller's audio against the assistant's.
 */
export const CALLER_GAP_MS = 250;

/**
 * Where a voice call's audio lies in time: ms from the moment its voice was opened, which is
 * the first sample of its recording and the time the transcript's `startMs` and `endMs` count
 * from. Both sides are placed as the peer hears them.
 */
export interface AudioTimeline {
  /** ms since the call's audio began. */
  now(): number;
  /** Where the assistant's last frame sent starts playing; null before the first. */
  readonly lastFrameAt: number | null;
  /** Where the assistant's audio sent so far ends playing. */
  readonly playEnd: number;
}

/** What a tap of the call's audio is given, placed on the timeline (a recording). */
export interface AudioTap {
  /** The caller's audio, in the link's format, starting at `at`. */
  caller(chunk: Buffer, at: number): void;
  /** One 20 ms frame of the assistant's, in the link's format, playing from `at`. */
  assistant(frame: Buffer, at: number): void;
  /** The peer dropped what it had not played (barge-in): the assistant's audio after `at` never played. */
  cut(at: number): void;
}

/** A link whose audio is placed on the call's timeline; its caller listeners get each chunk's place too. */
export interface TimedLink extends AudioLink {
  readonly timeline: AudioTimeline;
  tap(tap: AudioTap): void;
}

/**
 * Decorates a transport's link with the call's timeline. The assistant's frames are placed where
 * they play: a frame sent while the peer still has audio queued follows it (a lead of frames
 * sent ahead plays later than it was sent), one sent after the peer ran dry plays at once; a
 * flush drops from now on what was placed later (the peer never played it: a barge-in's cut,
 * or a pause whose frames the output takes back and sends again on resume). The caller's
 * chunks are placed end to end as they arrive, ending when they arrived unless that would open
 * a gap of less than CALLER_GAP_MS.
 */
export function timedLink(link: AudioLink, clock: Pick<PacerClock, 'now'>): TimedLink {
  const origin = clock.now();
  const now = () => clock.now() - origin;
  const frameMs = 20;
  const taps: AudioTap[] = [];
  const listeners: ((chunk: Buffer, at: number) => void)[] = [];
  const callerBytesPerMs = frameBytes(link.format) / frameMs;
  let callerEnd: number | null = null;
  const state = { lastFrameAt: null as number | null, playEnd: 0 };
  const timeline: AudioTimeline = {
    now,
    get lastFrameAt() {
      return state.lastFrameAt;
    },
    get playEnd() {
      return state.playEnd;
    },
  };
  link.onAudio((chunk) => {
    const duration = chunk.length / callerBytesPerMs;
    const arrived = now() - duration;
    const at = callerEnd === null || arrived - callerEnd > CALLER_GAP_MS ? Math.max(0, arrived) : callerEnd;
    callerEnd = at + duration;
    for (const tap of taps) tap.caller(chunk, at);
    for (const listener of listeners) listener(chunk, at);
  });
  return {
    format: link.format,
    lead: link.lead,
    timeline,
    tap: (tap) => void taps.push(tap),
    sendFrame(frame, startsRun) {
      const at = Math.max(now(), state.playEnd);
      state.lastFrameAt = at;
      state.playEnd = at + frameMs;
      for (const tap of taps) tap.assistant(frame, at);
      link.sendFrame(frame, startsRun);
    },
    flushPeer() {
      const at = now();
      if (state.playEnd > at) {
        state.playEnd = at;
        for (const tap of taps) tap.cut(at);
      }
      link.flushPeer();
    },
    onAudio: (listener) => void listeners.push(listener),
  };
}
