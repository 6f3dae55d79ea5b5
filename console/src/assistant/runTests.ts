import type { OpenCallSocket } from '../../../src/calls/testing/conversation.ts';
import { runTest, targetOf, type Organization, type TestResult } from '../../../src/calls/testing/run.ts';
import { parseSuite, type Suite } from '../../../src/calls/testing/suite.ts';
import type { Kind } from '../api/types';

/**
 * The console runs an assistant's tests itself, in the browser, as `parley test` does: the same
 * suite parser and runner (src/calls/testing), each test a real call started with `clientTools`
 * and held over the browser's WebSocket, its tools answered from the mocks, its caller played and
 * its criteria judged by the service. The service runs nothing on the page's behalf, so it never
 * calls itself and needs no new route or limit (docs/testing-assistants.md, "In the console").
 */

/** The most a test may take before its caller hangs up, as `parley test --timeout` defaults. */
const TEST_TIMEOUT_MS = 120_000;

/** The browser's WebSocket as the runner's call socket. */
const openBrowserSocket: OpenCallSocket = (url, on) => {
  const socket = new WebSocket(url);
  socket.onmessage = (event: MessageEvent<unknown>) => {
    if (typeof event.data === 'string') on.message(event.data);
  };
  socket.onerror = () => on.error('the connection failed');
  socket.onclose = () => on.close();
  return { send: (text) => socket.send(text), isOpen: () => socket.readyState === WebSocket.OPEN };
};

/** The file's text read as a suite for this page's assistant: an error (in words) when it does not read or names another. */
export function readSuite(text: string, kind: Kind, name: string): Suite {
  const suite = parseSuite('The test file', text);
  if (suite.kind !== kind || suite.target !== name) {
    throw new Error(`The test file tests the ${suite.kind} "${suite.target}"; this page is the ${kind} "${name}". Run it from that ${suite.kind}'s page, or change the file's ${kind}: field.`);
  }
  return suite;
}

interface Owner {
  id: string;
  systemPromptGreeting?: string | null;
  extensions?: readonly { type: string; parameters?: unknown }[];
}

/** The suite's tests, one after the other (each a call), each result told as it comes; stops early when asked. */
export async function runSuite(org: Organization, kind: Kind, owner: Owner, suite: Suite, onResult: (result: TestResult) => void, stopped: () => boolean): Promise<void> {
  const target = targetOf(kind, owner.id, owner);
  for (const test of suite.tests) {
    if (stopped()) return;
    onResult(await runTest(org, target, suite, test, { version: null, timeoutMs: TEST_TIMEOUT_MS, openSocket: openBrowserSocket }));
  }
}
