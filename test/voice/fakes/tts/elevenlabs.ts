/** The conformance handle of the fake ElevenLabs multi-context WebSocket (fakes/elevenlabs.ts). */
import { startElevenLabsFake } from '../elevenlabs.ts';
import type { TtsFake, TtsFakeOptions } from './contract.ts';

/** The `pcm_<rate>` formats of the multi-context socket: the rate asked for, else the next above, else 44.1 kHz. */
const RATES = [8000, 16000, 22050, 24000, 44100];

export async function startTtsFake({ apiKey, outputSampleRate }: TtsFakeOptions): Promise<TtsFake> {
  const sampleRate = RATES.find((rate) => rate >= outputSampleRate) ?? 44100;
  const fake = await startElevenLabsFake({
    apiKey, voiceId: 'voice-conformance', modelId: 'eleven_flash_v2_5', outputFormat: `pcm_${sampleRate}`, voiceSettings: { stability: 0.4, speed: 1.1 },
  });
  return {
    baseUrl: fake.url,
    voice: { voiceId: 'voice-conformance', modelId: 'eleven_flash_v2_5', stability: 0.4, speed: 1.1 },
    sampleRate,
    sent: () => fake.sent,
    pace: (ms) => void (fake.chunkIntervalMs = ms),
    failNextSentence: () => void (fake.failNext = 'This request exceeds your quota of 10000. You have 0 credits remaining.'),
    dropAfterChunks: (count) => void (fake.dropAfterChunks = count),
    violations: () => fake.violations.list,
    close: () => fake.close(),
  };
}
