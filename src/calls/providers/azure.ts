import { defineProvider } from './descriptor.ts';

/**
 * Azure AI Speech: accepted by the strategy API from the start (`voice.provider`), but Parley
 * cannot speak with it yet, so a call naming it fails at start, saying so. A factory in `tts`
 * and a credential are what it lacks.
 */
export const azure = defineProvider({
  name: 'azure', title: 'Azure AI Speech', defaultBaseUrl: null, credential: null, platform: null,
  tts: { sampleRates: [], streaming: true },
});
