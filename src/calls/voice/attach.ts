import { createVad, type VadSettings } from '../../voice/vad.ts';
import { systemClock } from '../../clock.ts';
import { ProviderHealth } from '../fallbacks/health.ts';
import { ProviderLedger } from '../fallbacks/ledger.ts';
import type { FallbackContext } from '../fallbacks/llm.ts';
import { FallbackSttSession } from '../fallbacks/stt.ts';
import { FallbackTtsSession } from '../fallbacks/tts.ts';
import type { TurnSettings } from '../turns/settings.ts';
import type { CallFailure } from '../failure.ts';
import type { Log } from '../record.ts';
import { controlFunctionTools, type ControlTool } from '../control-tools.ts';
import { descriptorOf } from '../providers/registry.ts';
import type { ToolWebhook } from '../tools.ts';
import type { VoiceKit } from './kit.ts';
import type { AudioLink } from './link.ts';
import { providerFailure, VoicePipeline } from './pipeline.ts';
import type { VoicePlan } from './plan.ts';
import { RealtimeVoice } from './realtime.ts';
import type { CallVoice, VoiceHost } from './voice.ts';

/** A voice could not be opened: the failure names the provider. */
export class VoiceOpenError extends Error {
  constructor(readonly failure: CallFailure) {
    super(failure.message);
  }
}

export interface VoiceOpening {
  plan: VoicePlan;
  link: AudioLink;
  host: VoiceHost;
  /** Bounds the opening of the providers (the call ended, or they took too long to answer). */
  signal: AbortSignal;
  /** The call's life: a session that closes itself when its signal aborts (STT) gets this one, never the opening bound. */
  lifetime: AbortSignal;
  /** The assistant's prompt and tools: a realtime model is given them itself. */
  instructions: string | null;
  tools: readonly ToolWebhook[];
  /** The call-control tools the call's transport can do (end_call always), offered to a realtime model beside the webhooks. */
  controls?: readonly ControlTool[];
  log: Log;
  /** The process's provider health and the call's ledger, for the fallbacks; absent: ones of this call alone. */
  fallback?: FallbackContext;
}

/** The provider a speech error names (TtsError and SttError carry it), else `fallback`. */
const providerOf = (error: unknown, fallback: string) => {
  const provider = (error as { provider?: unknown } | null)?.provider;
  return typeof provider === 'string' ? provider : fallback;
};

/**
 * Opens a call's voice as its plan says. A pipeline's TTS and STT sessions are opened here; on a
 * failure whatever was opened is closed again and a VoiceOpenError names the provider. A realtime
 * voice connects once it is attached and reports a failure to connect to its host, like any later
 * failure, so the caller hears the apology.
 */
export async function openVoice(kit: VoiceKit, opening: VoiceOpening): Promise<CallVoice> {
  const { plan, link, host, signal } = opening;
  if (plan.kind === 'unusable') throw new VoiceOpenError(plan.failure);
  // eSpeak is local: its opening needs no bound (and the call's opening signal may long have expired).
  const fallbackTts = () => kit.tts('espeak').open({ apiKey: null, baseUrl: '', voice: {}, signal: new AbortController().signal });
  if (plan.kind === 'realtime') {
    const realtime = descriptorOf(plan.provider)?.realtime;
    if (!realtime) throw new VoiceOpenError({ source: `realtime:${plan.provider}`, statusCode: null, message: `${plan.provider} has no realtime model` });
    return new RealtimeVoice({
      link, pacer: kit.pacer, fallbackTts, log: opening.log,
      connect: (connectSignal) => realtime.connect({
        ...plan.access, signal: connectSignal,
        model: plan.model,
        instructions: opening.instructions ?? '',
        ...(plan.voice.voiceId ? { voice: plan.voice.voiceId } : {}),
        ...(plan.voice.speed !== undefined ? { speed: plan.voice.speed } : {}),
        tools: [
          ...opening.tools.map((t) => ({ name: t.name, ...(t.spec.description !== undefined ? { description: t.spec.description } : {}), parameters: t.spec.parameters })),
          ...controlFunctionTools(opening.controls ?? []).map(({ function: f }) => ({ name: f.name, description: f.description ?? '', parameters: f.parameters ?? {} })),
        ],
        vad: plan.vad,
        turns: plan.turns,
        ...(plan.transcriptionModel ? { transcriptionModel: plan.transcriptionModel } : {}),
        ...(plan.language ? { language: plan.language } : {}),
      }),
    }, host, signal);
  }
  const fallback = opening.fallback ?? { health: new ProviderHealth(systemClock), ledger: new ProviderLedger(), owner: '', log: opening.log };
  let tts: FallbackTtsSession | null = null;
  let stt: FallbackSttSession | null = null;
  try {
    const voices = [plan.tts, ...(plan.fallbacks?.tts ?? [])].map((c) => ({
      provider: c.provider, open: (s: AbortSignal) => kit.tts(c.provider).open({ ...c.access, voice: c.voice, signal: s }),
    }));
    const ttsSession = await FallbackTtsSession.open(voices, fallback, signal)
      .catch((error: unknown) => Promise.reject(new VoiceOpenError(providerFailure(`tts:${providerOf(error, plan.tts.provider)}`, error))));
    tts = ttsSession;
    // An STT session closes itself when its signal aborts: it must live as long as the call, not its opening.
    const transcribers = [plan.stt, ...(plan.fallbacks?.stt ?? [])].map((c) => ({
      provider: c.provider,
      open: () => kit.stt(c.provider).open({ ...c.access, signal: opening.lifetime, ...(c.model ? { model: c.model } : {}), ...(c.language ? { language: c.language } : {}) }),
    }));
    const sttSession = await FallbackSttSession.open(transcribers, fallback)
      .catch((error: unknown) => Promise.reject(new VoiceOpenError(providerFailure(`stt:${providerOf(error, plan.stt.provider)}`, error))));
    stt = sttSession;
    const vad = createVad(await kit.vadModel(), listeningVad(plan.vad, plan.turn));
    return new VoicePipeline({
      link, pacer: kit.pacer, vad, turn: plan.turn,
      // Named when they fail: the provider that failed last (a fallback may have taken over).
      tts: { session: ttsSession, get provider() { return ttsSession.provider; } },
      stt: { session: sttSession, get provider() { return sttSession.provider; } },
      fallbackTts,
    }, host);
  } catch (error) {
    await Promise.all([tts?.close(), stt?.close()]).catch(() => undefined);
    throw error instanceof VoiceOpenError ? error : new VoiceOpenError(providerFailure('voice', error));
  }
}

/**
 * With smart endpointing the VAD reports every pause of this length (or minSilence, when shorter),
 * so the turn-taker can read the words so far while the turn's own silence is still running; with
 * vad it reports only the strategy's stopDuration, which ends the turn.
 */
export const PAUSE_SECONDS = 0.15;

function listeningVad(vad: VadSettings, turn: TurnSettings): VadSettings {
  return turn.endpointing === 'smart' ? { ...vad, stopDuration: Math.min(PAUSE_SECONDS, turn.minSilence) } : vad;
}
