/** The conformance handle of the fake Deepgram `/v1/listen` WebSocket (fakes/deepgram.ts). */
import { startFakeDeepgram } from '../deepgram.ts';
import type { SttFake, SttFakeOptions } from './contract.ts';

export async function startSttFake(options: SttFakeOptions): Promise<SttFake> {
  const fake = await startFakeDeepgram(options);
  return {
    baseUrl: fake.url,
    setTranscript: (text) => fake.setTranscript(text),
    receivedAudio: () => fake.receivedAudio(),
    // Deepgram ends a session it cannot go on with by closing the socket (1011 NET-0000).
    failNextUtterance: () => fake.closeConnections(1011, 'NET-0000'),
    hangNextUtterance: () => fake.skipNextFinalize(),
    openConnections: () => fake.openConnections(),
    waitFor: (predicate, what) => fake.waitFor(predicate, what),
    problems: () => fake.problems,
    close: () => fake.close(),
  };
}
