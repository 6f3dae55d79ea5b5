export type { TtsSession, VoiceSettings } from './types.ts';
export { loadEspeakEngine, type EspeakEngine } from './espeak-engine.ts';
