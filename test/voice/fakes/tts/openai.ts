/** The conformance handle of the fake OpenAI `POST /v1/audio/speech` (fakes/openai-speech.ts). */
import { startOpenAiSpeechFake } from '../openai-speech.ts';
import type { TtsFake, TtsFakeOptions } from './contract.ts';

export async function startTtsFake({ apiKey }: TtsFakeOptions): Promise<TtsFake> {
  const fake = await startOpenAiSpeechFake({ apiKey, model: 'gpt-4o-mini-tts', voice: 'coral' });
  return {
    baseUrl: fake.url,
    voice: { voiceId: 'coral', modelId: 'gpt-4o-mini-tts' },
    // `pcm` is always 24 kHz, whatever the strategy asks.
    sampleRate: 24000,
    sent: () => fake.sent.map((s) => ({ text: s.input, pcm: s.pcm })),
    pace: (ms) => void (fake.chunkIntervalMs = ms),
    failNextSentence: () => void (fake.failNextWith = 503),
    dropAfterChunks: (count) => void (fake.dropAfterChunks = count),
    violations: () => fake.violations.list,
    close: () => fake.close(),
  };
}
