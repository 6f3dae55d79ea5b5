import { createVad } from '../../voice/vad.ts';
import type { SttSession } from '../../voice/stt/stt.ts';
import type { TtsSession } from '../../voice/tts/index.ts';
import type { CallFailure } from '../record.ts';
import type { VoiceKit } from './kit.ts';
import type { AudioLink } from './link.ts';
import { providerFailure, VoicePipeline } from './pipeline.ts';
import type { VoicePlan } from './plan.ts';
import type { CallVoice, VoiceHost } from './voice.ts';

/** A voice could not be opened: the failure names the provider. */
export class VoiceOpenError extends Error {
  constructor(readonly failure: CallFailure) {
    super(failure.message);
  }
}

/**
 * Opens a call's voice as its plan says: the TTS and STT sessions and a VAD for a pipeline.
 * On a failure, whatever was opened is closed again and a VoiceOpenError names the provider.
 */
export async function openVoice(kit: VoiceKit, plan: VoicePlan, link: AudioLink, host: VoiceHost, signal: AbortSignal): Promise<CallVoice> {
  if (plan.kind === 'unusable') throw new VoiceOpenError(plan.failure);
  if (plan.kind === 'realtime') throw new VoiceOpenError({ source: 'realtime', statusCode: null, message: 'speech_to_speech calls are not available yet' });
  let tts: TtsSession | null = null;
  let stt: SttSession | null = null;
  try {
    const ttsSession = await kit.tts(plan.tts.provider).open({ ...plan.tts.access, voice: plan.tts.voice, signal })
      .catch((error: unknown) => Promise.reject(new VoiceOpenError(providerFailure(`tts:${plan.tts.provider}`, error))));
    tts = ttsSession;
    const sttSession = await kit.stt(plan.stt.provider).open({
      ...plan.stt.access, signal,
      ...(plan.stt.model ? { model: plan.stt.model } : {}), ...(plan.stt.language ? { language: plan.stt.language } : {}),
    }).catch((error: unknown) => Promise.reject(new VoiceOpenError(providerFailure(`stt:${plan.stt.provider}`, error))));
    stt = sttSession;
    const vad = createVad(await kit.vadModel(), plan.vad);
    return new VoicePipeline({
      link, pacer: kit.pacer, vad,
      tts: { session: ttsSession, provider: plan.tts.provider },
      stt: { session: sttSession, provider: plan.stt.provider },
      fallbackTts: () => kit.tts('espeak').open({ apiKey: null, baseUrl: '', voice: {}, signal }),
    }, host);
  } catch (error) {
    await Promise.all([tts?.close(), stt?.close()]).catch(() => undefined);
    throw error instanceof VoiceOpenError ? error : new VoiceOpenError(providerFailure('voice', error));
  }
}
