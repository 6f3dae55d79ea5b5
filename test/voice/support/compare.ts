/** Signal comparisons for audio tests. */

export interface Similarity {
  /** Normalised cross-correlation, -1..1, at the best lag. */
  ncc: number;
  /** Samples by which signal lags reference at that best lag. */
  lag: number;
}

/**
 * The normalised cross-correlation of two signals at the rate they share, the maximum over lags
 * -maxLag..maxLag (a resampler's filter delays its output by a few samples), over their overlap.
 */
export function similarity(reference: ArrayLike<number>, signal: ArrayLike<number>, maxLag = 64): Similarity {
  let best: Similarity = { ncc: -Infinity, lag: 0 };
  for (let lag = -maxLag; lag <= maxLag; lag++) {
    let dot = 0;
    let energyRef = 0;
    let energySig = 0;
    const from = Math.max(0, -lag);
    const to = Math.min(reference.length, signal.length - lag);
    for (let i = from; i < to; i++) {
      const r = reference[i]!;
      const s = signal[i + lag]!;
      dot += r * s;
      energyRef += r * r;
      energySig += s * s;
    }
    const ncc = energyRef > 0 && energySig > 0 ? dot / Math.sqrt(energyRef * energySig) : 0;
    if (ncc > best.ncc) best = { ncc, lag };
  }
  return best;
}

/** signal's duration over reference's (both at the same rate). */
export function durationRatio(reference: ArrayLike<number>, signal: ArrayLike<number>): number {
  return signal.length / reference.length;
}

/**
 * Where speech begins and ends in a clean signal: the first and last 10 ms frame whose RMS is
 * above a tenth of the loudest frame's. In samples.
 */
export function energyBounds(pcm: Int16Array, sampleRate: number): { start: number; end: number } {
  const frame = Math.round(sampleRate / 100);
  const levels: number[] = [];
  for (let at = 0; at + frame <= pcm.length; at += frame) {
    let sum = 0;
    for (let i = at; i < at + frame; i++) sum += pcm[i]! * pcm[i]!;
    levels.push(Math.sqrt(sum / frame));
  }
  const threshold = Math.max(...levels) / 10;
  const first = levels.findIndex((v) => v > threshold);
  const last = levels.length - 1 - [...levels].reverse().findIndex((v) => v > threshold);
  return { start: first * frame, end: (last + 1) * frame };
}
