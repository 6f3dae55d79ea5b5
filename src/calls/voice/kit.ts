import { Pacer } from '../../voice/pacer.ts';
import { systemPacerClock, type PacerClock } from '../../voice/pacer-clock.ts';
import { createDeepgramStt } from '../../voice/stt/deepgram.ts';
import { createOpenAiStt } from '../../voice/stt/openai.ts';
import type { SttProvider, SttProviderName } from '../../voice/stt/stt.ts';
import { cartesiaTts } from '../../voice/tts/cartesia.ts';
import { elevenLabsTts } from '../../voice/tts/elevenlabs.ts';
import { espeakTts } from '../../voice/tts/espeak.ts';
import { loadEspeakEngine, type EspeakEngine, type TtsProvider, type TtsProviderName } from '../../voice/tts/index.ts';
import { openAiTts } from '../../voice/tts/openai.ts';
import type { SileroModel } from '../../voice/vad-model.ts';
import { loadSileroWorker } from '../../voice/vad-worker.ts';

/**
 * What every voice call of a process shares: the pacer of outgoing audio, the VAD model and the
 * eSpeak engine (each loaded on first use, so a service that never takes a voice call never
 * pays for them), and the providers. Built once per app; closed with it.
 */
export interface VoiceKit {
  readonly pacer: Pacer;
  /** The pacer's clock: its timers also time a call's DTMF gathering, so one manual clock drives both in tests. */
  readonly clock: PacerClock;
  vadModel(): Promise<SileroModel>;
  tts(name: TtsProviderName): TtsProvider;
  stt(name: SttProviderName): SttProvider;
  close(): Promise<void>;
}

export function createVoiceKit(options: { pacerClock?: PacerClock } = {}): VoiceKit {
  let model: Promise<SileroModel> | null = null;
  let engine: Promise<EspeakEngine> | null = null;
  const espeak: TtsProvider = {
    name: 'espeak',
    open: async (opts) => espeakTts(await (engine ??= loadEspeakEngine())).open(opts),
  };
  const tts: Record<TtsProviderName, TtsProvider> = { elevenlabs: elevenLabsTts, openai: openAiTts, cartesia: cartesiaTts, espeak };
  const stt: Record<SttProviderName, SttProvider> = { deepgram: createDeepgramStt(), openai: createOpenAiStt() };
  const clock = options.pacerClock ?? systemPacerClock;
  return {
    pacer: new Pacer(clock),
    clock,
    vadModel: () => (model ??= loadSileroWorker()),
    tts: (name) => tts[name],
    stt: (name) => stt[name],
    async close() {
      const [m, e] = [model, engine];
      model = engine = null;
      await Promise.all([m?.then((x) => x.close()), e?.then((x) => x.close())]).catch(() => undefined);
    },
  };
}
