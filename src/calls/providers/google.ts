import { defineProvider } from './descriptor.ts';

/**
 * Google Cloud Text-to-Speech: accepted by the strategy API from the start (`voice.provider`),
 * but Parley cannot speak with it yet, so a call naming it fails at start, saying so.
 */
export const google = defineProvider({
  name: 'google', title: 'Google Cloud Text-to-Speech', defaultBaseUrl: null, credential: null, platform: null,
  tts: { sampleRates: [], streaming: true },
});
