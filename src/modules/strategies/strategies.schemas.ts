import { Type, type Static } from 'typebox';
import { STRATEGY_TYPES, StrategyParameters } from '../../calls/strategy-parameters.ts';
import { DateTime, Name, Uuid } from '../../http/schemas.ts';

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
    title: 'LlmGenerationStrategyCreate',
    examples: [{
      name: 'Warm English voice',
      type: 'text_to_speech',
      parameters: { model: 'gpt-4o-mini', temperature: 0.7, outputSampleRate: 16000, voice: { provider: 'elevenlabs', voiceId: 'Rachel', speed: 1 }, vad: { stopDuration: 0.6 } },
    }],
  },
);
export type StrategyWrite = Static<typeof StrategyWrite>;

export const StrategyParams = Type.Object({ vendorId: Uuid, organizationId: Uuid, strategyId: Uuid });
