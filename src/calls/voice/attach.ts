import { createVad } from '../../voice/vad.ts';
import type { SttSession } from '../../voice/stt/stt.ts';
import type { TtsSession } from '../../voice/tts/index.ts';
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
}

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
        ...(plan.transcriptionModel ? { transcriptionModel: plan.transcriptionModel } : {}),
        ...(plan.language ? { language: plan.language } : {}),
      }),
    }, host, signal);
  }
  let tts: TtsSession | null = null;
  let stt: SttSession | null = null;
  try {
    const ttsSession = await kit.tts(plan.tts.provider).open({ ...plan.tts.access, voice: plan.tts.voice, signal })
      .catch((error: unknown) => Promise.reject(new VoiceOpenError(providerFailure(`tts:${plan.tts.provider}`, error))));
    tts = ttsSession;
    // The STT session closes itself when its signal aborts: it must live as long as the call, not its opening.
    const sttSession = await kit.stt(plan.stt.provider).open({
      ...plan.stt.access, signal: opening.lifetime,
      ...(plan.stt.model ? { model: plan.stt.model } : {}), ...(plan.stt.language ? { language: plan.stt.language } : {}),
    }).catch((error: unknown) => Promise.reject(new VoiceOpenError(providerFailure(`stt:${plan.stt.provider}`, error))));
    stt = sttSession;
    const vad = createVad(await kit.vadModel(), plan.vad);
    return new VoicePipeline({
      link, pacer: kit.pacer, vad,
      tts: { session: ttsSession, provider: plan.tts.provider },
      stt: { session: sttSession, provider: plan.stt.provider },
      fallbackTts,
    }, host);
  } catch (error) {
    await Promise.all([tts?.close(), stt?.close()]).catch(() => undefined);
    throw error instanceof VoiceOpenError ? error : new VoiceOpenError(providerFailure('voice', error));
  }
}
