import { Type, type Static } from 'typebox';

/** What a backchannel is by default: short English acknowledgements said over the assistant. */
export const DEFAULT_BACKCHANNELS: readonly string[] = [
  'yeah', 'yes', 'yep', 'ok', 'okay', 'uh-huh', 'mm-hmm', 'mhm', 'hmm', 'right', 'sure', 'i see', 'got it', 'alright', 'all right',
];

const seconds = (minimum: number, maximum: number, description: string) => Type.Number({ minimum, maximum, description: `${description}, in seconds` });

/** The strategy's `parameters.turn`: how a caller's turn ends and what interrupts the assistant (docs/voice.md, "Turn-taking"). */
export const TurnParameters = Type.Object(
  {
    endpointing: Type.Optional(Type.String({
      enum: ['smart', 'vad'],
      description: 'smart (default): the turn ends after minSilence when what the caller said reads as complete, up to maxSilence when it does not; vad: after vad.stopDuration of silence, whatever was said, and any speech over the assistant interrupts it',
    })),
    minSilence: Type.Optional(seconds(0.1, 2, 'smart: silence that ends a turn that reads as complete (default 0.25)')),
    maxSilence: Type.Optional(seconds(0.3, 5, 'smart: the longest silence a turn that reads as unfinished waits for more (default 1.6; not below minSilence)')),
    backchannels: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 60 }), {
      maxItems: 100,
      description: 'Phrases that, said whole while the assistant speaks, neither interrupt it nor make a turn (matched ignoring case and punctuation); default an English set: yeah, yes, ok, okay, uh-huh, mm-hmm, right, sure, I see, got it, alright…',
    })),
    interruptionMinWords: Type.Optional(Type.Integer({ minimum: 1, maximum: 20, description: 'smart: words of caller speech over the assistant that make a real interruption (default 2)' })),
    interruptionMinDuration: Type.Optional(seconds(0.1, 3, 'smart: caller speech over the assistant this long (with at least one word) makes a real interruption (default 0.5)')),
    resumeAfterFalseInterruption: Type.Optional(Type.Boolean({ description: 'smart: after a backchannel, a cough or a word or two, the assistant goes on where it paused (default true); false: it stays cut' })),
  },
  { additionalProperties: false },
);
export type TurnParameters = Static<typeof TurnParameters>;

/** The turn settings a call runs with: the strategy's, completed with the defaults. */
export interface TurnSettings {
  endpointing: 'smart' | 'vad';
  minSilence: number;
  maxSilence: number;
  backchannels: readonly string[];
  interruptionMinWords: number;
  interruptionMinDuration: number;
  resumeAfterFalseInterruption: boolean;
}

export const DEFAULT_TURN_SETTINGS: Readonly<TurnSettings> = Object.freeze({
  endpointing: 'smart',
  minSilence: 0.25,
  maxSilence: 1.6,
  backchannels: DEFAULT_BACKCHANNELS,
  interruptionMinWords: 2,
  interruptionMinDuration: 0.5,
  resumeAfterFalseInterruption: true,
});

export function turnSettings(values: TurnParameters = {}): TurnSettings {
  const defined = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<TurnSettings>;
  return { ...DEFAULT_TURN_SETTINGS, ...defined };
}

/** What the schema cannot say: the fields that contradict each other, as a 400's details. */
export function turnProblems(values: TurnParameters | undefined): { path: string; message: string }[] {
  if (!values) return [];
  const settings = turnSettings(values);
  return settings.maxSilence < settings.minSilence
    ? [{ path: 'parameters.turn.maxSilence', message: `must not be below minSilence (${settings.minSilence} s): it is the longest wait, minSilence the shortest` }]
    : [];
}
