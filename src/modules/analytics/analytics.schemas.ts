import { Type, type Static } from 'typebox';
import { DateTime } from '../../http/schemas.ts';

/** The longest range one overview covers: a year, leap day included. */
export const MAX_RANGE_DAYS = 366;
export const DEFAULT_RANGE_DAYS = 30;

export const OverviewQuery = Type.Object(
  {
    from: Type.Optional(Type.String({ format: 'date-time', description: `Start of the range, inclusive; default: ${DEFAULT_RANGE_DAYS} days before to` })),
    to: Type.Optional(Type.String({ format: 'date-time', description: `End of the range, exclusive; default: now. At most ${MAX_RANGE_DAYS} days after from` })),
  },
  { additionalProperties: false },
);
export type OverviewQuery = Static<typeof OverviewQuery>;

const Count = Type.Integer({ minimum: 0 });
const NullableMs = Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], { description: 'null when no turn was answered in the range' });

export const CallsOnDay = Type.Object(
  {
    day: Type.String({ format: 'date', description: 'A UTC day (YYYY-MM-DD)', examples: ['2026-11-23'] }),
    completed: Count,
    abandoned: Count,
    failed: Count,
  },
  { title: 'CallsOnDay' },
);

export const AnsweredByOnDay = Type.Object(
  {
    day: Type.String({ format: 'date', description: 'A UTC day (YYYY-MM-DD)', examples: ['2026-11-23'] }),
    human: Count,
    voicemail: Count,
    screening: Count,
    unknown: Count,
  },
  { title: 'AnsweredByOnDay' },
);

export const AnalyticsOverview = Type.Object(
  {
    from: DateTime,
    to: DateTime,
    callsPerDay: Type.Array(CallsOnDay, {
      description: 'Every UTC day the range touches, oldest first, with the calls that ended on it by outcome (days without calls are zeros)',
    }),
    answeredByPerDay: Type.Array(AnsweredByOnDay, {
      description: "Every UTC day the range touches, oldest first, with the agent task calls that ended on it by who answered them (calls of agents with voicemail_detection; days without any are zeros)",
    }),
    turnLatency: Type.Object(
      {
        turns: Count,
        p50Ms: NullableMs,
        p95Ms: NullableMs,
      },
      { description: "Answered user turns in the range: ms from the end of the user's turn to the assistant's first output, nearest-rank percentiles" },
    ),
    responseLatency: Type.Object(
      { turns: Count, p50Ms: NullableMs, p95Ms: NullableMs },
      { description: "Answered voice turns in the range: ms from the caller's last speech to the first audio frame of the answer (what a caller waits), nearest-rank percentiles" },
    ),
    interruptions: Type.Object(
      {
        real: Type.Integer({ minimum: 0, description: 'Answers the caller cut by speaking over them' }),
        false: Type.Integer({ minimum: 0, description: 'Sound over an answer that paused it and was no interruption (a backchannel, a cough), of calls that ended in the range' }),
        falseRate: Type.Number({ minimum: 0, maximum: 1, description: 'false / (real + false); 0 when there was neither' }),
      },
      { description: 'Voice calls: speech over the assistant' },
    ),
    tools: Type.Object(
      {
        invocations: Count,
        errors: Type.Integer({ minimum: 0, description: 'Invocations that gave the LLM no usable result (non-2xx, timeout, refused, too large…)' }),
        errorRate: Type.Number({ minimum: 0, maximum: 1, description: 'errors / invocations; 0 without invocations' }),
      },
      { description: 'Tool webhook calls made during calls in the range' },
    ),
    tasks: Type.Object(
      { pending: Count, scheduled: Count, inProgress: Count, completed: Count, failed: Count, cancelled: Count },
      { description: "The organization's agent tasks by status now (not limited to the range)" },
    ),
  },
  { title: 'AnalyticsOverview' },
);
export type AnalyticsOverview = Static<typeof AnalyticsOverview>;
