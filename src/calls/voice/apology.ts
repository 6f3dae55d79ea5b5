import type { Pacer } from '../../voice/pacer.ts';
import type { TtsSession } from '../../voice/tts/index.ts';
import type { AudioLink } from './link.ts';
import { Speaker } from './speaker.ts';
import type { VoiceHost } from './voice.ts';

/** How long an apology may take before the call ends anyway. */
const APOLOGY_MS = 10_000;

/**
 * The last thing a failing call says, through a speaker of its own: `done` settles once it has
 * been played (reported to the host like any utterance), or could not be, or after APOLOGY_MS.
 * The caller closes `speaker` with the voice.
 */
export function speakApology(link: AudioLink, pacer: Pacer, tts: TtsSession, text: string, host: Pick<VoiceHost, 'played'>): { speaker: Speaker; done: Promise<void> } {
  let finish = () => {};
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, APOLOGY_MS);
    finish = () => {
      clearTimeout(timer);
      resolve();
    };
  });
  const speaker = new Speaker(link, pacer, tts, {
    firstAudio: () => {},
    played: (id, heard, interrupted) => {
      host.played(id, heard, interrupted);
      finish();
    },
    failed: () => finish(), // the apology itself failed: nothing more can be said
  });
  speaker.say('apology', text);
  return { speaker, done };
}
