import { Type, type Static } from 'typebox';
import { SAMPLE_RATES } from '../voice/audio/format.ts';
import { TurnParameters } from './turns/settings.ts';

/*
 * How a call is configured by its strategy: the settings the engine runs a call with. The
 * strategies feature stores them and serves them (its schema embeds this one); the engine reads
 * them when a call connects (voicePlanFor, the LLM settings).
 */

const unit = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
const seconds = (description: string) => Type.Number({ minimum: 0, maximum: 10, description: `${description}, in seconds` });

export const STRATEGY_TYPES = ['text_to_speech', 'speech_to_speech'] as const;
const VOICE_PROVIDERS = ['elevenlabs', 'openai', 'azure', 'google', 'cartesia', 'deepgram', 'espeak'] as const;

const Voice = Type.Object(
  {
    provider: Type.Optional(Type.String({ enum: [...VOICE_PROVIDERS], description: 'Speech provider' })),
    voiceId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    modelId: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    speed: Type.Optional(Type.Number({ minimum: 0.25, maximum: 4 })),
    stability: Type.Optional(unit('Voice stability')),
    similarityBoost: Type.Optional(unit('Similarity boost')),
    style: Type.Optional(unit('Style exaggeration')),
    useSpeakerBoost: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

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

const TRANSCRIBER_PROVIDERS = ['deepgram', 'openai'] as const;

const Transcriber = Type.Object(
  {
    provider: Type.String({ enum: [...TRANSCRIBER_PROVIDERS], description: 'Speech-to-text provider; openai also reaches self-hosted Whisper servers with that API' }),
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'The provider default when absent' })),
    language: Type.Optional(Type.String({ minLength: 2, maxLength: 35, description: 'BCP 47, e.g. en or en-US' })),
  },
  { additionalProperties: false },
);

export const StrategyParameters = Type.Object(
  {
    model: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'LLM model name; the service default when absent' })),
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
