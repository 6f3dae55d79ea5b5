/** The conformance handle of the fake OpenAI `POST /v1/audio/transcriptions` (fakes/openai-stt.ts). */
import { startFakeOpenAiStt } from '../openai-stt.ts';
import type { SttFake, SttFakeOptions } from './contract.ts';

export async function startSttFake(options: SttFakeOptions): Promise<SttFake> {
  // The API takes ISO-639-1: a strategy's en-US is sent as en.
  const fake = await startFakeOpenAiStt({ ...options, language: options.language.split('-')[0]! });
  return {
    baseUrl: fake.url,
    setTranscript: (text) => fake.setTranscript(text),
    receivedAudio: () => fake.receivedAudio(),
    failNextUtterance: () => fake.failNext({ kind: 'status', status: 503 }),
    hangNextUtterance: () => fake.failNext({ kind: 'hang' }),
    openConnections: () => fake.openConnections(),
    waitFor: (predicate, what) => fake.waitFor(predicate, what),
    problems: () => fake.problems,
    close: () => fake.close(),
  };
}
