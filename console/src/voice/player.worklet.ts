/**
 * The speaker's side of a voice test call, on the audio rendering thread: 16 kHz PCM s16le
 * frames from the call are resampled to the context's rate and played through a small jitter
 * buffer. Playback starts once PREBUFFER_MS are queued (or the queue has waited that long), and
 * again after the queue ran dry, so network jitter of a few frames is not heard as gaps.
 * `clear` drops everything queued (the call said `interrupted`). Every REPORT_MS it tells the
 * page how many samples it has played, which the page shows (and a test reads).
 */
import { createResampler } from '../../../src/voice/audio/resample.ts';

const CALL_RATE = 16000;
const PREBUFFER_MS = 60;
const REPORT_MS = 100;

export type PlayerMessage = { played: number; buffered: number };

class PlayerProcessor extends AudioWorkletProcessor {
  private readonly rate = Math.round(sampleRate);
  private resampler = createResampler(CALL_RATE, this.rate);
  private readonly queue: Float32Array[] = [];
  private offset = 0; // samples of queue[0] already played
  private buffered = 0;
  private playing = false;
  private waited = 0; // samples of time something has been queued without playing
  private played = 0;
  private sinceReport = 0;

  constructor() {
    super();
    this.port.onmessage = (event: MessageEvent<ArrayBuffer | 'clear'>) => {
      if (event.data === 'clear') {
        this.queue.length = 0;
        this.offset = this.buffered = this.waited = 0;
        this.playing = false;
        // The filter's memory belongs to the dropped audio.
        this.resampler = createResampler(CALL_RATE, this.rate);
        return;
      }
      const pcm = this.resampler.process(new Int16Array(event.data));
      const samples = new Float32Array(pcm.length);
      for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i]! / 0x8000;
      if (samples.length === 0) return;
      this.queue.push(samples);
      this.buffered += samples.length;
    };
  }

  process(_inputs: Float32Array[][], outputs: Float32Array[][]): boolean {
    const out = outputs[0]?.[0];
    if (!out) return true;
    const prebuffer = (PREBUFFER_MS * this.rate) / 1000;
    if (!this.playing && this.buffered > 0) {
      this.waited += out.length;
      if (this.buffered >= prebuffer || this.waited >= prebuffer) this.playing = true;
    }
    let written = 0;
    while (this.playing && written < out.length && this.queue.length > 0) {
      const head = this.queue[0]!;
      const n = Math.min(out.length - written, head.length - this.offset);
      out.set(head.subarray(this.offset, this.offset + n), written);
      written += n;
      this.offset += n;
      if (this.offset === head.length) {
        this.queue.shift();
        this.offset = 0;
      }
    }
    out.fill(0, written);
    this.buffered -= written;
    this.played += written;
    if (this.playing && this.buffered === 0) {
      this.playing = false; // ran dry: wait for the prebuffer again
      this.waited = 0;
    }
    this.sinceReport += out.length;
    if (this.sinceReport >= (REPORT_MS * this.rate) / 1000) {
      this.sinceReport = 0;
      this.port.postMessage({ played: this.played, buffered: this.buffered } satisfies PlayerMessage);
    }
    return true;
  }
}

registerProcessor('parley-player', PlayerProcessor);
