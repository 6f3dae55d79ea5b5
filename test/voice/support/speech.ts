/**
 * Real speech for tests, made by the Debian espeak-ng CLI and converted by sox (both installed
 * by .ci/run). sox, not Parley's own resampler or codecs, does the conversion, so a test that
 * compares Parley's output with this audio compares it with an independent implementation.
 */
import { spawn } from 'node:child_process';
import type { AudioFormat } from '../../../src/voice/audio/format.ts';
import { bytesToSamples } from '../../../src/voice/audio/pcm.ts';

function run(command: string, args: string[], input?: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => err.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => {
      if (code === 0) resolve(Buffer.concat(out));
      else reject(new Error(`${command} exited with ${code}: ${Buffer.concat(err).toString()}`));
    });
    child.stdin.end(input);
  });
}

/** espeak-ng's WAV (22050 Hz, PCM16 mono) of the text. */
export function espeakWav(text: string): Promise<Buffer> {
  return run('espeak-ng', ['-v', 'en', '-s', '160', '--stdout', text]);
}

const soxEncoding = { pcm_s16le: ['-e', 'signed-integer', '-b', '16'], mulaw: ['-e', 'mu-law', '-b', '8'], alaw: ['-e', 'a-law', '-b', '8'] } as const;

/** Raw audio (headerless) from sox: input is a WAV file, or raw bytes of inputFormat. */
export function sox(input: Buffer, to: AudioFormat, inputFormat?: AudioFormat): Promise<Buffer> {
  const inArgs = inputFormat ? ['-t', 'raw', ...soxEncoding[inputFormat.encoding], '-c', '1', '-r', String(inputFormat.sampleRate), '-'] : ['-t', 'wav', '-'];
  // -D: no dither, so the output is the same on every run; -V1: errors only on stderr.
  return run('sox', ['-V1', '-D', ...inArgs, '-t', 'raw', ...soxEncoding[to.encoding], '-c', '1', '-r', String(to.sampleRate), '-'], input);
}

/** The text spoken, in the wire format asked for. */
export async function speechBytes(text: string, format: AudioFormat): Promise<Buffer> {
  return sox(await espeakWav(text), format);
}

/** The text spoken, as PCM16 at the rate asked for (16 kHz by default). */
export async function speech(text: string, sampleRate = 16000): Promise<Int16Array> {
  return bytesToSamples(Uint8Array.from(await speechBytes(text, { encoding: 'pcm_s16le', sampleRate })));
}

/** The PCM16 audio band-limited to what a lower rate carries, by sox: down to bandRate and back. */
export async function bandLimited(pcm: Int16Array, sampleRate: number, bandRate: number): Promise<Int16Array> {
  const pcmFormat = (rate: number): AudioFormat => ({ encoding: 'pcm_s16le', sampleRate: rate });
  const low = await sox(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength), pcmFormat(bandRate), pcmFormat(sampleRate));
  return bytesToSamples(Uint8Array.from(await sox(low, pcmFormat(sampleRate), pcmFormat(bandRate))));
}

export function silence(seconds: number, sampleRate = 16000): Int16Array {
  return new Int16Array(Math.round(seconds * sampleRate));
}

/** A noise burst (a cough, a door, line noise) from sox's synth: `seconds` of pink noise faded in and out. */
export async function noise(seconds: number, sampleRate = 16000, volume = 0.4): Promise<Int16Array> {
  const raw = await run('sox', [
    '-V1', '-D', '-n', '-t', 'raw', '-e', 'signed-integer', '-b', '16', '-c', '1', '-r', String(sampleRate), '-',
    'synth', String(seconds), 'pinknoise', 'vol', String(volume), 'fade', 'q', '0.02', String(seconds), '0.05',
  ]);
  return bytesToSamples(Uint8Array.from(raw));
}
