import { ChunkChannel } from './channel.ts';
import type { EspeakEngine } from './espeak-engine.ts';
import { TtsError, type TtsChunk, type TtsOptions, type TtsProvider, type TtsSession } from './types.ts';

/**
 * Local speech with no account: eSpeak NG as WebAssembly, shipped in an npm package, so it works
 * after `npm install` with no system package. The engine is loaded once per process and passed in.
 */
export const DEFAULT_ESPEAK_VOICE = 'en';
/** eSpeak's own default rate, which speed 1 stands for. */
const BASE_WORDS_PER_MINUTE = 175;

/** speed (0.25..4) as words per minute, within the 80..450 eSpeak can speak. */
export function espeakWordsPerMinute(speed: number | undefined): number {
  return Math.round(Math.min(450, Math.max(80, BASE_WORDS_PER_MINUTE * (speed ?? 1))));
}

class EspeakSession implements TtsSession {
  readonly provider = 'espeak';
  private closed = false;

  constructor(private readonly engine: EspeakEngine, private readonly options: TtsOptions) {}

  async *synthesize(text: string, signal: AbortSignal): AsyncIterable<TtsChunk> {
    if (signal.aborted || text.trim() === '') return;
    if (this.closed) throw new TtsError(this.provider, 'session closed');
    const { sampleRate } = this.engine;
    const channel = new ChunkChannel(signal);
    const stop = this.engine.speak(
      { text: text.trim(), voice: this.options.voice.voiceId ?? DEFAULT_ESPEAK_VOICE, wordsPerMinute: espeakWordsPerMinute(this.options.voice.speed) },
      {
        chunk: (pcm) => channel.push({ pcm, sampleRate }),
        end: () => channel.end(),
        fail: (message) => channel.fail(new TtsError(this.provider, message)),
      },
    );
    try {
      yield* channel;
    } finally {
      if (!channel.finished) stop();
    }
  }

  async close(): Promise<void> {
    this.closed = true;
  }
}

export function espeakTts(engine: EspeakEngine): TtsProvider {
  return {
    name: 'espeak',
    open: async (options: TtsOptions): Promise<TtsSession> => new EspeakSession(engine, options),
  };
}
