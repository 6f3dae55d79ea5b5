import { fillPlaceholders, TemplateTooLongError } from './template.ts';

export const VOICEMAIL_ACTIONS = ['hang_up', 'leave_message'] as const;
export type VoicemailAction = (typeof VOICEMAIL_ACTIONS)[number];

/**
 * When the agent greets a placed call that detection judges: at the answer, as without detection
 * (withdrawn at once if a machine answered), or once the verdict says a person did.
 */
export const GREETING_TIMINGS = ['at_answer', 'after_verdict'] as const;
export type GreetingTiming = (typeof GREETING_TIMINGS)[number];

/** Who answered a placed call, as its record says (null on the record: no detection ran). */
export const VERDICTS = ['human', 'voicemail', 'screening', 'unknown'] as const;
export type Verdict = (typeof VERDICTS)[number];

/** What detection noticed (speech, a beep, words, silence) or did (spoke, hung up), named on the record. */
export const SIGNALS = [
  'short_answer', 'silence', 'long_speech', 'beep', 'voicemail_words', 'screening_words', 'greeting_ended', 'prompt_ended',
  'timeout', 'screening_answered', 'person_answered', 'message_started', 'message_ended', 'message_cut', 'ended_early',
  'greeting_withdrawn',
] as const;
export type SignalName = (typeof SIGNALS)[number];

/** What the agent did about it: went on as with a person, hung up, left its message, or could not (the far end hung up first, the greeting never ended). */
export const DETECTION_ACTIONS = ['continued', 'hung_up', 'left_message', 'message_not_left', 'ended_early'] as const;
export type DetectionAction = (typeof DETECTION_ACTIONS)[number];

/** Something detection noticed or did, at `atMs` after the answer (the far end's stream time). */
export interface DetectionSignal {
  signal: SignalName;
  atMs: number;
  /** Speech, a pause or a beep: how long it lasted. */
  durationMs?: number;
  /** A beep. */
  frequencyHz?: number;
  levelDbfs?: number;
  /** Words: the phrase that matched. */
  phrase?: string;
}

/** A call's detection as its record keeps it. */
export interface CallDetection {
  verdict: Verdict;
  /** ms after the answer; null while undecided (the far end hung up first). */
  decidedAfterMs: number | null;
  /** null while detection runs. */
  action: DetectionAction | null;
  signals: DetectionSignal[];
}

/** The `voicemail_detection` extension's defaults and bounds (seconds). */
export const MAX_WAIT_SECONDS = { default: 30, min: 5, max: 60 } as const;
/** The longest message as stored; filled, it may grow to four times that (longer: no message is left). */
export const MAX_MESSAGE_LENGTH = 1000;

/** What a placed call does about who answered it: the agent's `voicemail_detection` extension, ready for a call. */
export interface VoicemailDetection {
  action: VoicemailAction;
  /** Left after the beep (action leave_message), and said to a screening assistant; placeholders filled. */
  message: string | null;
  maxWaitMs: number;
  detectScreening: boolean;
  /** at_answer: the greeting goes out at the answer while detection listens, and is withdrawn on a machine. */
  greeting: GreetingTiming;
  /** A message was left: the task is tried again all the same. */
  retryAfterMessage: boolean;
  /** The agent's name, said to a screening assistant. */
  agentName: string;
}

interface StoredParameters {
  action?: VoicemailAction;
  message?: string;
  maxWaitSeconds?: number;
  detectScreening?: boolean;
  greeting?: GreetingTiming;
  retryAfterMessage?: boolean;
}

/** The agent's voicemail_detection extension (validated when it was saved), or null when it has none. */
export function voicemailDetectionOf(
  extensions: readonly { type: string; parameters: Record<string, unknown> }[], agentName: string, values: Readonly<Record<string, unknown>>,
): VoicemailDetection | null {
  const extension = extensions.find((e) => e.type === 'voicemail_detection');
  if (!extension) return null;
  const p = extension.parameters as StoredParameters;
  const message = p.message ? filled(p.message, values) : null;
  return {
    action: p.action === 'leave_message' && message ? 'leave_message' : 'hang_up',
    message,
    maxWaitMs: (p.maxWaitSeconds ?? MAX_WAIT_SECONDS.default) * 1000,
    detectScreening: p.detectScreening ?? true,
    greeting: p.greeting ?? 'at_answer',
    retryAfterMessage: p.retryAfterMessage ?? false,
    agentName,
  };
}

function filled(message: string, values: Readonly<Record<string, unknown>>): string | null {
  try {
    return fillPlaceholders(message, values, MAX_MESSAGE_LENGTH * 4).text;
  } catch (err) {
    if (err instanceof TemplateTooLongError) return null;
    throw err;
  }
}
