/** The conformance handle of a self-hosted Whisper-compatible server: it speaks OpenAI's transcription API, so the fake is that API's (fakes/openai-stt.ts). */
export { startSttFake } from './openai.ts';
