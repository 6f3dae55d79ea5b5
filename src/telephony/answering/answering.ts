import type { CallEngine } from '../../calls/engine.ts';
import type { CallSetup, Log } from '../../calls/record.ts';
import { AnsweringDetection } from './detection.ts';
import { screeningReply } from './screening.ts';
import type { FarEndTap } from './tap.ts';

/**
 * Detection for a placed call whose agent has a voicemail_detection extension, or null (the tap
 * stops). Words come from a speech-to-text session of its own when the call's voice plan has one
 * (a text_to_speech pipeline); a speech_to_speech call is judged by beep and cadence.
 */
export function answeringFor(engine: CallEngine, setup: CallSetup, tap: FarEndTap, lifetime: AbortSignal, log: Log): AnsweringDetection | null {
  const settings = setup.voicemailDetection;
  if (!settings || !setup.voice || setup.voice.kind === 'unusable') {
    tap.stop();
    return null;
  }
  const plan = setup.voice;
  return new AnsweringDetection(tap, {
    settings,
    openStt: plan.kind === 'pipeline'
      ? (signal) => engine.voice.stt(plan.stt.provider).open({
          ...plan.stt.access, signal, ...(plan.stt.model ? { model: plan.stt.model } : {}), ...(plan.stt.language ? { language: plan.stt.language } : {}),
        })
      : null,
    screeningReply: (heard, signal) => screeningReply(engine.runtime.llm, setup.settings, setup.systemPrompt, settings.agentName, heard, signal),
    note: (answeredBy, detection) => engine.store.noteDetection(setup.callId, { answeredBy, detection }),
    timers: engine.voice.clock,
    log,
  }, lifetime);
}
