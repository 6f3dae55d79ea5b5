import { MAX_TOOL_ANSWER, MAX_USER_TEXT, type ServerFrame } from '../frames.ts';
import { argumentsMatch } from './matching.ts';
import type { Mock, TestCase } from './suite.ts';

export interface Line {
  role: 'assistant' | 'caller';
  text: string;
}

export interface SeenToolCall {
  name: string;
  arguments: string;
  /** How it was answered: a mock, no mock (a failure), or not at all (a call-control tool, end_call…). */
  answer: 'mock' | 'unmocked' | 'control';
}

/** What a test's call left: the conversation, the tools called, how it ended and what went wrong. */
export interface Conversation {
  callId: string | null;
  transcript: Line[];
  toolCalls: SeenToolCall[];
  endReason: string;
  callerTurns: number;
  problems: string[];
}

/** What a conversation hears from its call socket. */
export interface CallSocketEvents {
  message(text: string): void;
  /** The socket failed (refused, reset): a sentence. */
  error(message: string): void;
  close(): void;
}

/** The call socket as the conversation uses it: `ws` in the CLI, the browser's WebSocket in the console. */
export interface CallSocket {
  send(text: string): void;
  isOpen(): boolean;
}

export type OpenCallSocket = (url: string, on: CallSocketEvents) => CallSocket;

/** What the call under test needs to know of its assistant, and the caller played by an LLM. */
export interface CallPlan {
  websocketUrl: string;
  openSocket: OpenCallSocket;
  /** The names of its tool webhooks: their tool calls are answered from the mocks. */
  webhooks: ReadonlySet<string>;
  /** It says a greeting first: the caller waits for it. */
  greets: boolean;
  /** The caller's next turn when a persona plays it. */
  callerTurn(transcript: Line[]): Promise<{ text: string | null; hangUp: boolean }>;
  timeoutMs: number;
}

const DEFAULT_PERSONA_TURNS = 8;
const NO_MOCK = 'parley test: no mock answers this tool call';

/** The first mock of the tool whose arguments match; undefined when none does. */
export function mockFor(mocks: readonly Mock[], name: string, args: string): Mock | undefined {
  return mocks.find((m) => m.tool === name && argumentsMatch(m, args));
}

const bodyOf = (mock: Mock): string => (mock.response === undefined ? '' : typeof mock.response === 'string' ? mock.response : JSON.stringify(mock.response));

/**
 * One test's call over the call WebSocket (text): the caller's turns go out one per answer
 * (after the greeting, when there is one), tool webhooks are answered from the mocks with
 * `tool_answer` frames, and the call ends when the caller is done, the assistant hangs up, or
 * the test's time runs out.
 */
export function holdConversation(plan: CallPlan, test: TestCase): Promise<Conversation> {
  const result: Conversation = { callId: null, transcript: [], toolCalls: [], endReason: 'disconnected', callerTurns: 0, problems: [] };
  const { turns, persona } = test.caller;
  const maxTurns = turns ? turns.length : (test.caller.maxTurns ?? DEFAULT_PERSONA_TURNS);
  return new Promise((resolve) => {
    let ended = false;
    let hangingUp = false;
    let waitingForGreeting = plan.greets;
    let hangUpNext = false;
    const timer = setTimeout(() => {
      result.problems.push(`the test took longer than ${plan.timeoutMs / 1000} s: hung up`);
      hangUp();
    }, plan.timeoutMs);
    const send = (frame: object) => {
      if (socket.isOpen()) socket.send(JSON.stringify(frame));
    };
    const hangUp = () => {
      if (hangingUp || ended) return;
      hangingUp = true;
      send({ type: 'end' });
    };
    const say = (text: string) => {
      const words = text.slice(0, MAX_USER_TEXT);
      result.callerTurns++;
      result.transcript.push({ role: 'caller', text: words });
      send({ type: 'user_message', text: words });
    };
    // The caller's move once the assistant is done speaking.
    const act = async () => {
      if (ended || hangingUp) return;
      if (hangUpNext || result.callerTurns >= maxTurns) return hangUp();
      if (turns) return say(turns[result.callerTurns] as string);
      try {
        const next = await plan.callerTurn(result.transcript);
        if (ended || hangingUp) return;
        if (!next.text?.trim()) return hangUp();
        hangUpNext = next.hangUp;
        say(next.text);
      } catch (err) {
        result.problems.push(`the caller (${persona ? 'persona' : 'script'}) failed: ${(err as Error).message}`);
        hangUp();
      }
    };
    const answerTool = (frame: Extract<ServerFrame, { type: 'tool_call' }>) => {
      if (!plan.webhooks.has(frame.name)) return void result.toolCalls.push({ name: frame.name, arguments: frame.arguments, answer: 'control' });
      const mock = mockFor(test.mocks ?? [], frame.name, frame.arguments);
      result.toolCalls.push({ name: frame.name, arguments: frame.arguments, answer: mock ? 'mock' : 'unmocked' });
      if (!mock) result.problems.push(`${frame.name} was called with ${frame.arguments} and no mock answers it`);
      const body = mock ? bodyOf(mock) : NO_MOCK;
      send({ type: 'tool_answer', id: frame.id, status: mock ? (mock.status ?? 200) : 500, body: body.slice(0, MAX_TOOL_ANSWER) });
    };
    const onFrame = (frame: ServerFrame) => {
      switch (frame.type) {
        case 'call_started':
          result.callId = frame.callId;
          if (!waitingForGreeting) void act();
          return;
        case 'assistant_message':
          result.transcript.push({ role: 'assistant', text: frame.text });
          if (waitingForGreeting) {
            waitingForGreeting = false;
            void act();
          }
          return;
        case 'tool_call': return answerTool(frame);
        case 'turn_done': return void act();
        case 'error': return void result.problems.push(`the service said: ${frame.message}`);
        case 'call_ended':
          ended = true;
          result.endReason = frame.reason;
          return;
        default:
      }
    };
    const socket = plan.openSocket(plan.websocketUrl, {
      message: (text) => onFrame(JSON.parse(text) as ServerFrame),
      error: (message) => {
        if (!ended) result.problems.push(`the call socket failed: ${message}`);
      },
      close: () => {
        clearTimeout(timer);
        ended = true;
        resolve(result);
      },
    });
  });
}
