import { Type, type Static } from 'typebox';
import { DateTime, Name, Uuid } from '../../http/schemas.ts';

const unit = (description: string) => Type.Number({ minimum: 0, maximum: 1, description });
const seconds = (description: string) => Type.Number({ minimum: 0, maximum: 10, description: `${description}, in seconds` });

export const STRATEGY_TYPES = ['text_to_speech', 'speech_to_speech'] as const;
export const VOICE_PROVIDERS = ['elevenlabs', 'openai', 'azure', 'google', 'cartesia', 'deepgram', 'espeak'] as const;
export const SAMPLE_RATES = [8000, 16000, 22050, 24000, 44100, 48000] as const;

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

export const TRANSCRIBER_PROVIDERS = ['deepgram', 'openai'] as const;

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
    transcriber: Type.Optional(Transcriber),
  },
  { additionalProperties: false },
);

export const Strategy = Type.Object(
  {
    id: Uuid,
    organizationId: Uuid,
    name: Name,
    type: Type.String({ enum: [...STRATEGY_TYPES] }),
    parameters: StrategyParameters,
    createdAt: DateTime,
    updatedAt: DateTime,
  },
  { title: 'LlmGenerationStrategy' },
);
export type Strategy = Static<typeof Strategy>;

export const StrategyWrite = Type.Object(
  {
    name: Name,
    type: Type.String({ enum: [...STRATEGY_TYPES], description: 'text_to_speech: LLM text then a voice; speech_to_speech: a realtime model' }),
    parameters: StrategyParameters,
  },
  {
    additionalProperties: false,
    title: 'LlmGenerationStrategyWrite',
    examples: [{
      name: 'Warm English voice',
      type: 'text_to_speech',
      parameters: { model: 'gpt-4o-mini', temperature: 0.7, outputSampleRate: 16000, voice: { provider: 'elevenlabs', voiceId: 'Rachel', speed: 1 }, vad: { stopDuration: 0.6 } },
    }],
  },
);
export type StrategyWrite = Static<typeof StrategyWrite>;

export const StrategyParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, strategyId: Uuid });
