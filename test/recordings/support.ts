/** What the recording tests share: reading a recording back, and checking where its channels' audio lies. */
import assert from 'node:assert/strict';
import { readWav } from '../../src/voice/audio/wav.ts';
import { bytesToSamples } from '../../src/voice/audio/pcm.ts';
export { energyBounds as speechBounds } from '../voice/support/compare.ts';

export interface Stereo {
  sampleRate: number;
  left: Int16Array;
  right: Int16Array;
}

/** A stereo PCM16 WAV split into its channels (readWav downmixes, so the data chunk is read here). */
export function splitWav(wav: Buffer): Stereo {
  assert.equal(wav.toString('latin1', 0, 4), 'RIFF');
  assert.equal(wav.toString('latin1', 8, 12), 'WAVE');
  assert.equal(wav.readUInt16LE(22), 2, 'two channels');
  assert.equal(wav.readUInt16LE(34), 16, '16-bit');
  assert.equal(wav.toString('latin1', 36, 40), 'data');
  assert.equal(wav.readUInt32LE(40), wav.length - 44, 'the data size is the rest of the file');
  readWav(wav); // a WAV any reader takes
  const samples = bytesToSamples(Buffer.from(wav.subarray(44)));
  const left = new Int16Array(samples.length / 2);
  const right = new Int16Array(samples.length / 2);
  for (let i = 0; i < left.length; i++) {
    left[i] = samples[2 * i]!;
    right[i] = samples[2 * i + 1]!;
  }
  return { sampleRate: wav.readUInt32LE(24), left, right };
}

/**
 * The best normalised cross-correlation of `reference` with `channel` starting `offsetMs` in, over
 * shifts of up to `toleranceMs` either way: the transcript's time is right within the tolerance
 * when this is high.
 */
export function alignedAt(reference: Int16Array, channel: Int16Array, sampleRate: number, offsetMs: number, toleranceMs = 40, lateMs = 0): { ncc: number; shiftMs: number } {
  const start = Math.round((offsetMs * sampleRate) / 1000);
  const maxShift = Math.round((toleranceMs * sampleRate) / 1000);
  const maxLate = Math.round(((toleranceMs + lateMs) * sampleRate) / 1000);
  let best = { ncc: -Infinity, shiftMs: 0 };
  for (let shift = -maxShift; shift <= maxLate; shift++) {
    let dot = 0;
    let er = 0;
    let es = 0;
    for (let i = 0; i < reference.length; i++) {
      const at = start + shift + i;
      const s = at >= 0 && at < channel.length ? channel[at]! : 0;
      const r = reference[i]!;
      dot += r * s;
      er += r * r;
      es += s * s;
    }
    const ncc = er > 0 && es > 0 ? dot / Math.sqrt(er * es) : 0;
    if (ncc > best.ncc) best = { ncc, shiftMs: (shift * 1000) / sampleRate };
  }
  return best;
}


/** How alignedInPieces judges the pieces of a line. */
export interface PieceRules {
  toleranceMs?: number;
  pieceMs?: number;
  /**
   * Each piece is looked for within the tolerance of where the piece before it was found (the
   * first one: of the transcript's time), not of the transcript's time: a jitter buffer that ran
   * dry or too full moves what follows by whole frames, and those steps add up over a line.
   */
  follow?: boolean;
  /** The worst pieces holding up to this share of the line's energy are left out (a late frame spoils its piece only). */
  leaveOut?: number;
  /**
   * With `follow`, how much later than where the piece before it was found a piece may be, beyond
   * the tolerance: a sender the busy machine held up sends what follows late, and the recording,
   * like the wire, has the gap. Never earlier: a piece must still come after the one before it.
   */
  lateMs?: number;
}

/**
 * Like alignedAt, judged per `pieceMs` of the reference, each piece within `toleranceMs` of where
 * the transcript puts it (`offsetMs` plus the piece's own offset), the NCCs averaged weighted by
 * each piece's energy: a phone's jitter buffer may move audio by a whole frame when it refills,
 * and each piece must still be found where the transcript's time says, within the tolerance.
 */
export function alignedInPieces(reference: Int16Array, channel: Int16Array, sampleRate: number, offsetMs: number, rules: PieceRules = {}): { ncc: number; pieces: string } {
  const { toleranceMs = 40, pieceMs = 500, follow = false, leaveOut = 0, lateMs = 0 } = rules;
  const size = Math.round((pieceMs * sampleRate) / 1000);
  const pieces: { ncc: number; energy: number }[] = [];
  const notes: string[] = [];
  let drift = 0;
  for (let at = 0; at < reference.length; at += size) {
    const piece = reference.subarray(at, Math.min(at + size, reference.length));
    let energy = 0;
    for (const s of piece) energy += s * s;
    if (piece.length < size / 4 || energy === 0) continue;
    // The first piece within the tolerance of the transcript's time; with follow, each later one may also be late.
    const late = follow && pieces.length > 0 ? lateMs : 0;
    const best = alignedAt(piece, channel, sampleRate, offsetMs + drift + (at * 1000) / sampleRate, toleranceMs, late);
    const shiftMs = drift + best.shiftMs;
    notes.push(`${best.ncc.toFixed(2)}@${shiftMs.toFixed(1)}ms`);
    if (follow && best.ncc >= 0.9) drift = shiftMs;
    pieces.push({ ncc: best.ncc, energy });
  }
  const total = pieces.reduce((n, p) => n + p.energy, 0);
  let [sum, weights] = [0, 0];
  for (const piece of pieces.sort((a, b) => b.ncc - a.ncc)) {
    if (weights > 0 && weights >= (1 - leaveOut) * total) break;
    sum += piece.ncc * piece.energy;
    weights += piece.energy;
  }
  return { ncc: weights ? sum / weights : 0, pieces: notes.join(' ') };
}
