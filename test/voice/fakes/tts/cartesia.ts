/** The conformance handle of the fake Cartesia TTS WebSocket (fakes/cartesia.ts). */
import { startCartesiaFake } from '../cartesia.ts';
import type { TtsFake, TtsFakeOptions } from './contract.ts';

/** Cartesia's raw PCM rates: the rate asked for, else the next above. */
const RATES = [8000, 16000, 22050, 24000, 44100, 48000];

export async function startTtsFake({ apiKey, outputSampleRate }: TtsFakeOptions): Promise<TtsFake> {
  const sampleRate = RATES.find((rate) => rate >= outputSampleRate) ?? 48000;
  const fake = await startCartesiaFake({ apiKey, version: '2025-04-16', modelId: 'sonic-3', voiceId: 'voice-conformance', sampleRate });
  return {
    baseUrl: fake.url,
    voice: { voiceId: 'voice-conformance', modelId: 'sonic-3' },
    sampleRate,
    sent: () => fake.sent.map((s) => ({ text: s.transcript, pcm: s.pcm })),
    pace: (ms) => void (fake.chunkIntervalMs = ms),
    failNextSentence: () => void (fake.failNextWith = 500),
    dropAfterChunks: (count) => void (fake.dropAfterChunks = count),
    violations: () => fake.violations.list,
    close: () => fake.close(),
  };
}
