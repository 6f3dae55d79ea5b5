import { Type, type Static } from 'typebox';
import { Value } from 'typebox/value';
import { parse } from 'yaml';

/*
 * The test files of assistants (docs/testing-assistants.md): YAML, one suite per file, checked
 * against this schema before anything runs: a file that does not read is a usage error, not a
 * failed test. Shared by `parley test` and the console's Tests page, so nothing here needs Node
 * (no file system) or eval (the console's CSP forbids it: Value checks, it does not compile).
 */

const Text = (description: string, max = 4000) => Type.String({ minLength: 1, maxLength: max, description });

/** A tool's arguments: a JSON subset (every field given must be there, equal) or a regular expression over their JSON text. */
const ArgumentMatch = {
  arguments: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: 'A JSON subset the arguments must contain' })),
  argumentsMatch: Type.Optional(Text('A regular expression the arguments (as JSON text) must match', 1000)),
};

const Mock = Type.Object({
  tool: Text('The tool webhook\'s name', 64),
  ...ArgumentMatch,
  status: Type.Optional(Type.Integer({ minimum: 100, maximum: 599, description: 'The HTTP status answered; default 200' })),
  response: Type.Optional(Type.Unknown({ description: 'The body answered: a string as it is, anything else as JSON; default ""' })),
}, { additionalProperties: false });

const ToolExpectation = Type.Object({ tool: Text('The tool\'s name', 64), ...ArgumentMatch }, { additionalProperties: false });

const Caller = Type.Object({
  turns: Type.Optional(Type.Array(Text('What the caller says', 10_000), { minItems: 1, maxItems: 50, description: 'Scripted turns, sent one per answer' })),
  persona: Type.Optional(Text('Who the caller is (an LLM plays them)')),
  goal: Type.Optional(Text('What the caller wants from the call', 2000)),
  maxTurns: Type.Optional(Type.Integer({ minimum: 1, maximum: 50, description: 'A persona\'s turns at most; default 8' })),
}, { additionalProperties: false });

const Expect = Type.Object({
  toolsCalled: Type.Optional(Type.Array(ToolExpectation, { maxItems: 50 })),
  toolsNotCalled: Type.Optional(Type.Array(Text('A tool that must not be called', 64), { maxItems: 50 })),
  transcriptContains: Type.Optional(Type.Array(Text('Text the assistant says', 1000), { maxItems: 50 })),
  transcriptNotContains: Type.Optional(Type.Array(Text('Text the assistant never says', 1000), { maxItems: 50 })),
  transcriptMatches: Type.Optional(Type.Array(Text('A regular expression over what the assistant says', 1000), { maxItems: 50 })),
  endedByEndCall: Type.Optional(Type.Boolean({ description: 'The assistant hung up with end_call' })),
  maxTurns: Type.Optional(Type.Integer({ minimum: 1, description: 'The caller spoke at most this many times' })),
  criteria: Type.Optional(Type.Array(Text('A sentence the conversation must satisfy, judged by an LLM', 1000), { maxItems: 20 })),
}, { additionalProperties: false });

const TestCase = Type.Object({
  name: Text('The test\'s name', 200),
  userValues: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  caller: Caller,
  mocks: Type.Optional(Type.Array(Mock, { maxItems: 100 })),
  expect: Expect,
}, { additionalProperties: false });

export const SuiteFile = Type.Object({
  assistant: Type.Optional(Text('The assistant under test, by name', 200)),
  agent: Type.Optional(Text('The agent under test, by name', 200)),
  tests: Type.Array(TestCase, { minItems: 1, maxItems: 200 }),
}, { additionalProperties: false });

export type SuiteFile = Static<typeof SuiteFile>;
export type TestCase = Static<typeof TestCase>;
export type Mock = Static<typeof Mock>;
export type ToolExpectation = Static<typeof ToolExpectation>;

export interface Suite extends SuiteFile {
  /** The file, as given or relative to the folder searched. */
  file: string;
  kind: 'assistant' | 'agent';
  target: string;
}

/** A test file that cannot run: exit 2, naming the file and the field. */
export class SuiteError extends Error {
  override name = 'SuiteError';
}

function checkRegex(file: string, path: string, source: string): void {
  try {
    new RegExp(source);
  } catch (err) {
    throw new SuiteError(`${file}: ${path}: not a regular expression (${(err as Error).message})`);
  }
}

/** A test file's text read and checked (`file` names it in errors): its target, and tests that can run. */
export function parseSuite(file: string, text: string): Suite {
  let value: unknown;
  try {
    value = parse(text);
  } catch (err) {
    throw new SuiteError(`${file}: not YAML that reads (${(err as Error).message.split('\n')[0]})`);
  }
  if (!Value.Check(SuiteFile, value)) {
    const [first] = Value.Errors(SuiteFile, value);
    const where = first?.instancePath ? first.instancePath.slice(1).replaceAll('/', '.') : '(the file)';
    // An unknown field shows as a `false` schema at its path (additionalProperties: false).
    const message = first?.keyword === 'boolean' ? 'is not a field of a test file' : (first?.message ?? 'is invalid');
    throw new SuiteError(`${file}: ${where}: ${message} (docs/testing-assistants.md shows the format)`);
  }
  const suite = value;
  if (Boolean(suite.assistant) === Boolean(suite.agent)) throw new SuiteError(`${file}: name exactly one of assistant or agent (by name)`);
  suite.tests.forEach((test, i) => {
    const at = `tests.${i}`;
    const { turns, persona } = test.caller;
    if (Boolean(turns) === Boolean(persona)) throw new SuiteError(`${file}: ${at}.caller: give either turns (scripted) or persona (played by an LLM)`);
    for (const [j, m] of (test.mocks ?? []).entries()) if (m.argumentsMatch) checkRegex(file, `${at}.mocks.${j}.argumentsMatch`, m.argumentsMatch);
    for (const [j, t] of (test.expect.toolsCalled ?? []).entries()) if (t.argumentsMatch) checkRegex(file, `${at}.expect.toolsCalled.${j}.argumentsMatch`, t.argumentsMatch);
    for (const [j, r] of (test.expect.transcriptMatches ?? []).entries()) checkRegex(file, `${at}.expect.transcriptMatches.${j}`, r);
  });
  const kind = suite.agent ? 'agent' : 'assistant';
  return { ...suite, file, kind, target: (suite.agent ?? suite.assistant) as string };
}
