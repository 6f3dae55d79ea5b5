import { Type, type Static, type TSchema } from 'typebox';
import { SAMPLE_RATES } from '../voice/audio/format.ts';
import { namesOf } from './providers/registry.ts';
import { TurnParameters } from './turns/settings.ts';

/*
 * How a call is configured by its strategy: the settings the engine runs a call with. The
 * strategies feature stores them and serves them (its schema embeds this one); the engine reads
 * them when a call connects (voicePlanFor, the LLM settings).
 */

const unit = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
const seconds = (description: string) => Type.Number({ minimum: 0, maximum: 10, description: `${description}, in seconds` });

export const STRATEGY_TYPES = ['text_to_speech', 'speech_to_speech'] as const;

const voiceProvider = () => Type.String({ enum: namesOf('tts'), description: 'Speech provider; none: espeak (local, no account)' });
const voiceFields = {
  voiceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  modelId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
  stability: Type.Optional(unit('Voice stability')),
  similarityBoost: Type.Optional(unit('Similarity boost')),
  style: Type.Optional(unit('Style exaggeration')),
  useSpeakerBoost: Type.Optional(Type.Boolean()),
};
const Voice = Type.Object({ provider: Type.Optional(voiceProvider()), ...voiceFields }, { additionalProperties: false });

const Vad = Type.Object(
  {
    confidenceThreshold: Type.Optional(unit('Speech confidence needed to count as speech')),
    minVolume: Type.Optional(unit('Minimum volume counted as speech')),
    startDuration: Type.Optional(seconds('Speech needed before a turn starts')),
    stopDuration: Type.Optional(seconds('Silence needed before a turn ends')),
    backbufferDuration: Type.Optional(seconds('Audio kept from before the turn started')),
  },
  { additionalProperties: false },
);

const Transcriber = Type.Object(
  {
    provider: Type.String({ enum: namesOf('stt'), description: 'Speech-to-text provider; openai also reaches self-hosted Whisper servers with that API' }),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The provider default when absent' })),
    language: Type.Optional(Type.String({ minLength: 2, maxLength: 35, description: 'BCP 47, e.g. en or en-US' })),
  },
  { additionalProperties: false },
);

/** A provider and its model: the call's LLM, or one of its fallbacks. */
const LlmChoice = Type.Object(
  {
    provider: Type.String({ enum: namesOf('llm'), description: 'The LLM provider; its key and base URL come from the organization\'s provider credential, else the platform\'s' }),
    model: Type.String({ minLength: 1, maxLength: 200, description: 'The provider\'s model, e.g. claude-sonnet-4-5 or llama-3.3-70b-versatile' }),
  },
  { additionalProperties: false },
);

/** How many fallbacks one kind of provider may list. */
export const MAX_FALLBACKS = 3;
const fallbackList = <T extends TSchema>(item: T, what: string) => Type.Optional(Type.Array(item, { minItems: 1, maxItems: MAX_FALLBACKS, description: `${what}, tried in order` }));

const Fallbacks = Type.Object(
  {
    llm: fallbackList(LlmChoice, 'LLMs that answer a turn the LLM before them could not start'),
    stt: fallbackList(Transcriber, 'Transcribers that take over when the one before them fails to open or dies'),
    tts: fallbackList(Type.Object({ provider: voiceProvider(), ...voiceFields }, { additionalProperties: false }), 'Voices that speak a sentence the voice before them could not start'),
  },
  {
    additionalProperties: false,
    description: 'Providers that take over when the primary fails before it produced anything; one that failed is skipped for a cool-down',
  },
);

export const StrategyParameters = Type.Object(
  {
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The model of the platform LLM when llm is absent (the service default when this is absent too), and the realtime model of speech_to_speech' })),
    llm: Type.Optional(LlmChoice),
    fallbacks: Type.Optional(Fallbacks),
    temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
    outputSampleRate: Type.Optional(Type.Integer({ enum: [...SAMPLE_RATES], description: 'Hz' })),
    voice: Type.Optional(Voice),
    vad: Type.Optional(Vad),
    turn: Type.Optional(TurnParameters),
    transcriber: Type.Optional(Transcriber),
  },
  { additionalProperties: false, title: 'LlmGenerationStrategyParameters' },
);
export type StrategyParameters = Static<typeof StrategyParameters>;
