/**
 * The microphone's side of a voice test call, on the audio rendering thread: the input's float
 * samples at the context's rate become 20 ms frames of PCM s16le at 16 kHz (the call's format),
 * posted to the page, which sends each as one binary WebSocket frame.
 *
 * The resampler is the service's own (polyphase windowed-sinc, tested against sox): the
 * browser has no streaming resampler to offer a worklet, and one filter on both sides means the
 * console hears what a WebSocket client of the service would send.
 */
import { createResampler } from '../../../src/voice/audio/resample.ts';

const CALL_RATE = 16000;
const FRAME = CALL_RATE / 50; // 20 ms

class MicProcessor extends AudioWorkletProcessor {
  private readonly resampler = createResampler(Math.round(sampleRate), CALL_RATE);
  private frame = new Int16Array(FRAME);
  private filled = 0;

  process(inputs: Float32Array[][]): boolean {
    const channels = inputs[0] ?? [];
    const length = channels[0]?.length ?? 0;
    if (length === 0) return true; // no input connected yet, or the track ended
    const pcm = new Int16Array(length);
    for (let i = 0; i < length; i++) {
      // A stereo microphone is mixed down; the call is mono.
      let sum = 0;
      for (const channel of channels) sum += channel[i] ?? 0;
      const value = Math.max(-1, Math.min(1, sum / channels.length));
      pcm[i] = value < 0 ? value * 0x8000 : value * 0x7fff;
    }
    for (const sample of this.resampler.process(pcm)) {
      this.frame[this.filled++] = sample;
      if (this.filled === FRAME) {
        // Int16Array is little-endian on every platform browsers run on: these are s16le bytes.
        this.port.postMessage(this.frame.buffer, [this.frame.buffer]);
        this.frame = new Int16Array(FRAME);
        this.filled = 0;
      }
    }
    return true;
  }
}

registerProcessor('parley-mic', MicProcessor);
