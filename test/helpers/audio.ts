// Test audio: speech made by espeak-ng at 8 kHz, WAV files read and written, and the
// measures the call tests judge audio by (normalised cross-correlation, speech span).
import { execFile } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** espeak-ng speaks `text`; sox makes it 8 kHz mono 16-bit, padded with `padSeconds` of silence. */
export async function speechWav(dir: string, name: string, text: string, padSeconds = 0): Promise<{ path: string; pcm: Int16Array }> {
  const raw = join(dir, `${name}.espeak.wav`);
  const path = join(dir, `${name}.wav`);
  await run('espeak-ng', ['-w', raw, '-s', '170', text]);
  await run('sox', [raw, '-r', '8000', '-c', '1', '-b', '16', path, ...(padSeconds > 0 ? ['pad', '0', String(padSeconds)] : [])]);
  return { path, pcm: (await readWav(path)).pcm };
}

/** Reads a PCM16 WAV, tolerating a header whose sizes were never filled in. */
export async function readWav(path: string): Promise<{ sampleRate: number; pcm: Int16Array }> {
  const buf = await readFile(path);
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') throw new Error(`${path} is not a WAV file`);
  let pos = 12;
  let sampleRate = 0;
  while (pos + 8 <= buf.length) {
    const id = buf.toString('ascii', pos, pos + 4);
    const size = buf.readUInt32LE(pos + 4);
    if (id === 'fmt ') {
      if (buf.readUInt16LE(pos + 8) !== 1 || buf.readUInt16LE(pos + 22) !== 16) throw new Error(`${path} is not 16-bit PCM`);
      sampleRate = buf.readUInt32LE(pos + 12);
    }
    if (id === 'data') {
      const end = size === 0 || pos + 8 + size > buf.length ? buf.length : pos + 8 + size;
      const bytes = buf.subarray(pos + 8, end - ((end - pos - 8) % 2));
      const pcm = new Int16Array(bytes.length / 2);
      for (let i = 0; i < pcm.length; i++) pcm[i] = bytes.readInt16LE(i * 2);
      return { sampleRate, pcm };
    }
    pos += 8 + size + (size % 2);
  }
  throw new Error(`${path} has no data chunk`);
}

export async function writeWav(path: string, pcm: Int16Array, sampleRate = 8000): Promise<void> {
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + pcm.length * 2, 4);
  header.write('WAVEfmt ', 8, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(sampleRate, 24);
  header.writeUInt32LE(sampleRate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(pcm.length * 2, 40);
  await writeFile(path, Buffer.concat([header, Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength)]));
}

/** First and last sample louder than `threshold` of the peak: where the speech is. */
export function speechSpan(pcm: Int16Array, threshold = 0.05): { start: number; end: number } {
  let peak = 0;
  for (const s of pcm) peak = Math.max(peak, Math.abs(s));
  const limit = peak * threshold;
  let start = 0;
  while (start < pcm.length && Math.abs(pcm[start] ?? 0) < limit) start++;
  let end = pcm.length - 1;
  while (end > start && Math.abs(pcm[end] ?? 0) < limit) end--;
  return { start, end: end + 1 };
}

function envelope(pcm: Int16Array, window: number): Float64Array {
  const out = new Float64Array(Math.floor(pcm.length / window));
  for (let i = 0; i < out.length; i++) {
    let sum = 0;
    for (let k = 0; k < window; k++) sum += Math.abs(pcm[i * window + k] ?? 0);
    out[i] = sum / window;
  }
  return out;
}

function correlationAt(a: Int16Array, b: Int16Array, lag: number): number {
  // b shifted by lag against a, over the overlap.
  let ab = 0;
  let aa = 0;
  let bb = 0;
  for (let i = Math.max(0, -lag); i < a.length && i + lag < b.length; i++) {
    const x = a[i] ?? 0;
    const y = b[i + lag] ?? 0;
    ab += x * y;
    aa += x * x;
    bb += y * y;
  }
  return aa === 0 || bb === 0 ? 0 : ab / Math.sqrt(aa * bb);
}

/**
 * The best normalised cross-correlation of `reference` found inside `recording`, and the
 * lag (in samples) where it is. A coarse search on 10 ms envelopes finds the alignment,
 * then the exact lag is searched sample by sample around it.
 */
export function bestCorrelation(reference: Int16Array, recording: Int16Array): { correlation: number; lag: number } {
  const window = 80;
  const ea = envelope(reference, window);
  const eb = envelope(recording, window);
  let coarse = 0;
  let best = -Infinity;
  for (let lag = -ea.length; lag < eb.length; lag++) {
    let s = 0;
    for (let i = Math.max(0, -lag); i < ea.length && i + lag < eb.length; i++) s += (ea[i] ?? 0) * (eb[i + lag] ?? 0);
    if (s > best) {
      best = s;
      coarse = lag * window;
    }
  }
  let result = { correlation: -1, lag: coarse };
  for (let lag = coarse - 2 * window; lag <= coarse + 2 * window; lag++) {
    const c = correlationAt(reference, recording, lag);
    if (c > result.correlation) result = { correlation: c, lag };
  }
  return result;
}

/**
 * Normalised cross-correlation judged per `segmentMs` of the reference's speech, each piece
 * aligned on its own within ±`maxShiftMs` of where the whole aligns, and averaged weighted
 * by the piece's energy (silent pieces say nothing). Jitter buffers may shift audio by whole
 * frames when they refill or trim; this still demands the same waveform, piece by piece.
 * The worst-matching pieces holding up to a quarter of the speech's energy are left out: on a
 * machine starved of CPU a real-time path may lose a late frame or two, which spoils the piece
 * it falls in, while a wrong codec, rate, byte order or channel spoils every piece.
 */
export function segmentedCorrelation(reference: Int16Array, recording: Int16Array, segmentMs = 500, maxShiftMs = 300): number {
  const { lag } = bestCorrelation(reference, recording);
  const seg = segmentMs * 8;
  const shift = maxShiftMs * 8;
  const { start, end } = speechSpan(reference);
  const pieces: { correlation: number; energy: number }[] = [];
  for (let at = start; at < end; at += seg) {
    const piece = reference.subarray(at, Math.min(at + seg, end));
    let energy = 0;
    for (const s of piece) energy += s * s;
    if (piece.length < seg / 4 || energy === 0) continue;
    // Placements of the piece around where it should be: a grid every 4 samples that runs
    // through the expected place (speech decorrelates within a few samples), then exact.
    const expected = at + lag;
    const lo = Math.max(0, expected - shift);
    const hi = Math.min(recording.length - piece.length, expected + shift);
    let best = { correlation: 0, at: Math.min(Math.max(expected, lo), hi) };
    for (let p = expected - Math.floor((expected - lo) / 4) * 4; p <= hi; p += 4) {
      const c = correlationAt(piece, recording, p);
      if (c > best.correlation) best = { correlation: c, at: p };
    }
    for (let p = Math.max(lo, best.at - 4); p <= Math.min(hi, best.at + 4); p++) {
      const c = correlationAt(piece, recording, p);
      if (c > best.correlation) best = { correlation: c, at: p };
    }
    pieces.push({ correlation: best.correlation, energy });
  }
  const total = pieces.reduce((n, p) => n + p.energy, 0);
  let [sum, weights] = [0, 0];
  for (const piece of pieces.sort((a, b) => b.correlation - a.correlation)) {
    if (weights >= 0.75 * total) break;
    sum += piece.correlation * piece.energy;
    weights += piece.energy;
  }
  return weights === 0 ? 0 : sum / weights;
}
