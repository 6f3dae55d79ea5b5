import { Type, type Static } from 'typebox';
import { MAX_USER_TEXT } from '../../calls/frames.ts';

/** How much a tester request may carry: a conversation a test's call can hold, and a page of criteria. */
export const TESTER_LIMITS = { transcriptEntries: 200, criteria: 20, persona: 4000, goal: 2000, criterion: 1000, toolCalls: 100 } as const;

const Line = Type.Object(
  {
    role: Type.String({ enum: ['assistant', 'caller'], description: 'Who said it: the assistant under test, or the caller' }),
    text: Type.String({ maxLength: MAX_USER_TEXT }),
  },
  { additionalProperties: false, title: 'TestTranscriptLine' },
);
const Transcript = Type.Array(Line, { maxItems: TESTER_LIMITS.transcriptEntries, description: 'The conversation so far, in order' });

export const CallerTurnRequest = Type.Object(
  {
    persona: Type.String({ minLength: 1, maxLength: TESTER_LIMITS.persona, description: 'Who the caller is and how they speak' }),
    goal: Type.Optional(Type.String({ minLength: 1, maxLength: TESTER_LIMITS.goal, description: 'What the caller wants from the call; they hang up once it is reached' })),
    transcript: Transcript,
  },
  {
    additionalProperties: false,
    title: 'CallerTurnRequest',
    examples: [{ persona: 'Ada, a busy customer who answers in few words', goal: 'Learn when order A-17 arrives', transcript: [{ role: 'assistant', text: 'Hello, how can I help?' }] }],
  },
);
export type CallerTurnRequest = Static<typeof CallerTurnRequest>;

export const CallerTurn = Type.Object(
  {
    text: Type.Union([Type.String(), Type.Null()], { description: "The caller's next words; null when they only hang up" }),
    hangUp: Type.Boolean({ description: 'The caller ends the call after these words (their goal is reached, or they give up)' }),
  },
  { title: 'CallerTurn' },
);
export type CallerTurn = Static<typeof CallerTurn>;

export const JudgmentRequest = Type.Object(
  {
    transcript: Transcript,
    toolCalls: Type.Optional(Type.Array(Type.Object(
      { name: Type.String({ maxLength: 200 }), arguments: Type.String({ maxLength: MAX_USER_TEXT }) },
      { additionalProperties: false },
    ), { maxItems: TESTER_LIMITS.toolCalls, description: 'The tools the assistant called, in order, for the judge to see' })),
    criteria: Type.Array(Type.String({ minLength: 1, maxLength: TESTER_LIMITS.criterion }), {
      minItems: 1, maxItems: TESTER_LIMITS.criteria, description: 'Sentences the conversation must satisfy, each judged on its own',
    }),
  },
  {
    additionalProperties: false,
    title: 'JudgmentRequest',
    examples: [{ transcript: [{ role: 'caller', text: 'Where is order A-17?' }, { role: 'assistant', text: 'It has shipped.' }], criteria: ['The assistant says whether the order has shipped.'] }],
  },
);
export type JudgmentRequest = Static<typeof JudgmentRequest>;

export const Verdict = Type.Object(
  {
    criterion: Type.String(),
    passed: Type.Boolean(),
    reason: Type.String({ description: "The judge's reason in a sentence, or why its answer could not be read (then passed is false)" }),
  },
  { title: 'Verdict' },
);
export type Verdict = Static<typeof Verdict>;

export const Judgment = Type.Object({ verdicts: Type.Array(Verdict, { description: 'One per criterion, in order' }) }, { title: 'Judgment' });
