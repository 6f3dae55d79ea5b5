import type { Ajv, ErrorObject } from 'ajv';
import { Type, type Static } from 'typebox';
import type { ErrorDetail } from '../../http/errors.ts';

/** Rubrics of a success evaluation: a boolean, a score from 1 to 10, or a few words. */
export const RUBRICS = ['pass_fail', 'score_1_10', 'descriptive'] as const;
export type Rubric = (typeof RUBRICS)[number];
/** Caller turns a call needs before it is analysed, when the assistant does not say. */
export const DEFAULT_MIN_TURNS = 2;
/** A structured-data schema, as JSON: it is sent to the LLM with every analysis. */
export const MAX_SCHEMA_BYTES = 16 * 1024;
const PROMPT_CHARS = 10_000;

const Prompt = Type.String({ minLength: 1, maxLength: PROMPT_CHARS, description: 'Replaces the default instruction; {{name}} placeholders are filled from the call\'s userValues' });

export const RecordingSetting = Type.Object(
  { enabled: Type.Boolean({ description: 'Record the calls (one stereo WAV: the caller left, the assistant right), encrypted at rest' }) },
  { additionalProperties: false, title: 'RecordingSetting' },
);
export type RecordingSetting = Static<typeof RecordingSetting>;

export const AnalysisSetting = Type.Object(
  {
    summary: Type.Optional(Type.Object({ prompt: Type.Optional(Prompt) }, { additionalProperties: false, description: 'The summary is always made; this changes how it is asked for' })),
    structuredData: Type.Optional(Type.Object(
      {
        schema: Type.Record(Type.String(), Type.Unknown(), { description: 'A JSON Schema (draft-07) the extracted data must satisfy; checked when saved' }),
        prompt: Type.Optional(Prompt),
      },
      { additionalProperties: false },
    )),
    successEvaluation: Type.Optional(Type.Object(
      {
        rubric: Type.String({ enum: [...RUBRICS], description: 'pass_fail: true or false; score_1_10: an integer from 1 to 10; descriptive: a few words' }),
        prompt: Type.Optional(Prompt),
      },
      { additionalProperties: false },
    )),
    minTurns: Type.Optional(Type.Integer({ minimum: 0, maximum: 1000, description: `Caller turns a call needs to be analysed (default ${DEFAULT_MIN_TURNS})` })),
  },
  {
    additionalProperties: false,
    title: 'AnalysisSetting',
    description: 'After each call with enough caller turns, its transcript goes to the LLM, which fills the conclusion: summary, data, success',
    examples: [{
      structuredData: { schema: { type: 'object', properties: { appointmentBooked: { type: 'boolean' }, date: { type: 'string' } }, required: ['appointmentBooked'] } },
      successEvaluation: { rubric: 'pass_fail', prompt: 'Did the caller get an appointment?' },
    }],
  },
);
export type AnalysisSetting = Static<typeof AnalysisSetting>;

const ajvDetail = (base: string) => (error: ErrorObject): ErrorDetail => ({
  path: `${base}${error.instancePath.replaceAll('/', '.')}`,
  message: `is not a valid JSON Schema: ${error.message ?? 'invalid'}`,
});

/**
 * The problems of an analysis setting that its schema alone cannot see: the structured-data
 * schema must be a JSON Schema Ajv accepts (validateSchema against the meta-schema, then a
 * compile, which catches a $ref that leads nowhere) and of bounded size.
 */
export function analysisProblems(ajv: Ajv, analysis: AnalysisSetting | null | undefined, base = 'analysis'): ErrorDetail[] {
  const schema = analysis?.structuredData?.schema;
  if (!schema) return [];
  const path = `${base}.structuredData.schema`;
  if (Buffer.byteLength(JSON.stringify(schema)) > MAX_SCHEMA_BYTES) return [{ path, message: `must be at most ${MAX_SCHEMA_BYTES} bytes as JSON` }];
  if (!ajv.validateSchema(schema)) return (ajv.errors ?? []).map(ajvDetail(path));
  try {
    ajv.compile(schema);
  } catch (err) {
    return [{ path, message: `is not a usable JSON Schema: ${err instanceof Error ? err.message.slice(0, 200) : 'it does not compile'}` }];
  } finally {
    // Ajv keeps what it compiled (and a $id it saw) for ever: a saved schema is compiled again when used.
    ajv.removeSchema(schema);
  }
  return [];
}
