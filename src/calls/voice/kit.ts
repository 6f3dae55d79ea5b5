import { Pacer } from '../../voice/pacer.ts';
import { systemPacerClock, type PacerClock } from '../../voice/pacer-clock.ts';
import type { SttOptions, SttSession } from '../../voice/stt/stt.ts';
import { loadEspeakEngine, type EspeakEngine, type TtsSession } from '../../voice/tts/index.ts';
import type { TtsOptions } from '../../voice/tts/types.ts';
import type { SileroModel } from '../../voice/vad-model.ts';
import { loadSileroWorker } from '../../voice/vad-worker.ts';
import { descriptorOf, type ProviderName } from '../providers/registry.ts';

/** How a call opens its session with one speech provider. */
export interface SpeechOpener<O, S> {
  open(options: O): Promise<S>;
}

/**
 * What every voice call of a process shares: the pacer of outgoing audio, the VAD model and the
 * eSpeak engine (each loaded on first use, so a service that never takes a voice call never
 * pays for them), and the providers of the registry. Built once per app; closed with it.
 */
export interface VoiceKit {
  readonly pacer: Pacer;
  /** The pacer's clock: its timers also time a call's DTMF gathering, so one manual clock drives both in tests. */
  readonly clock: PacerClock;
  vadModel(): Promise<SileroModel>;
  /** A provider's text to speech (the voice plan only names providers that have one). */
  tts(name: ProviderName): SpeechOpener<TtsOptions, TtsSession>;
  /** A provider's speech to text. */
  stt(name: ProviderName): SpeechOpener<SttOptions, SttSession>;
  close(): Promise<void>;
}

export function createVoiceKit(options: { pacerClock?: PacerClock } = {}): VoiceKit {
  let model: Promise<SileroModel> | null = null;
  let engine: Promise<EspeakEngine> | null = null;
  const engines = { espeak: () => (engine ??= loadEspeakEngine()) };
  const clock = options.pacerClock ?? systemPacerClock;
  return {
    pacer: new Pacer(clock),
    clock,
    vadModel: () => (model ??= loadSileroWorker()),
    tts(name) {
      const open = descriptorOf(name)?.tts?.open;
      if (!open) throw new Error(`${name} has no text to speech`);
      return { open: (opts) => open(opts, engines) };
    },
    stt(name) {
      const stt = descriptorOf(name)?.stt;
      if (!stt) throw new Error(`${name} has no speech to text`);
      return { open: (opts) => stt.open(opts) };
    },
    async close() {
      const [m, e] = [model, engine];
      model = engine = null;
      await Promise.all([m?.then((x) => x.close()), e?.then((x) => x.close())]).catch(() => undefined);
    },
  };
}
