import { espeakTts } from '../../voice/tts/espeak.ts';
import { defineProvider } from './descriptor.ts';

/** eSpeak NG in WebAssembly: local speech with no account, what a strategy naming no voice speaks with. */
export const espeak = defineProvider({
  name: 'espeak',
  title: 'eSpeak NG',
  defaultBaseUrl: null,
  credential: null,
  platform: null,
  tts: { sampleRates: [22050], streaming: true, open: async (options, engines) => espeakTts(await engines.espeak()).open(options) },
});
