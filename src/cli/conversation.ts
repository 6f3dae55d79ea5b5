import { createInterface, type Interface } from 'node:readline';
import { WebSocket } from 'ws';
import { MAX_USER_TEXT, type ServerFrame } from '../calls/frames.ts';

export interface ConversationIo {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
  /** A person at a terminal: a prompt is shown, and their lines are not echoed back. */
  interactive: boolean;
  /**
   * Registers what an interrupt (SIGINT: Ctrl-C with the input piped) does, and gives back how
   * to unregister it. A terminal's Ctrl-C reaches the conversation through its readline instead.
   */
  onInterrupt?: (handler: () => void) => () => void;
}

export interface ConversationEnd {
  callId: string | null;
  /** The call's end reason (call_ended), `disconnected` when the socket closed without one, `interrupted` after a second Ctrl-C. */
  reason: string;
}

type Outgoing = { type: 'user_message'; text: string } | { type: 'end' };

/**
 * Renders server frames as a terminal transcript: streamed answers, tool calls and their
 * results as they happen, errors, and the end.
 */
class Transcript {
  private streaming = false;
  constructor(private readonly out: NodeJS.WritableStream) {}

  line(text: string): void {
    this.breakStream();
    this.out.write(`${text}\n`);
  }

  private breakStream(): void {
    if (this.streaming) this.out.write('\n');
    this.streaming = false;
  }

  show(frame: ServerFrame): void {
    switch (frame.type) {
      case 'call_started':
        if (frame.unfilledPlaceholders?.length) this.line(`note: no value for the placeholders ${frame.unfilledPlaceholders.map((p) => `{{${p}}}`).join(', ')}`);
        return;
      case 'assistant_delta':
        if (!this.streaming) this.out.write('assistant: ');
        this.streaming = true;
        this.out.write(frame.text);
        return;
      case 'assistant_message':
        if (this.streaming) this.breakStream();
        else this.line(`assistant: ${frame.text}`);
        return;
      case 'tool_call': return this.line(`  tool call   ${frame.name} ${frame.arguments}`);
      case 'tool_result': return this.line(`  tool result ${frame.name}: ${frame.ok ? 'ok' : 'failed'}${frame.statusCode === null ? '' : `, HTTP ${frame.statusCode}`}, ${frame.latencyMs} ms`);
      case 'tool_waiting': return this.line(`  waiting for ${frame.names.join(', ')} (${(frame.elapsedMs / 1000).toFixed(1)} s)`);
      case 'user_transcript': return frame.final ? this.line(`you (heard): ${frame.text}`) : undefined;
      case 'interrupted': return this.line('  (interrupted)');
      case 'error': return this.line(`error: ${frame.message}`);
      case 'call_ended': return this.line(`call ended: ${frame.reason}`);
      case 'speech_started':
      case 'turn_done':
        return;
    }
  }
}

/**
 * A text conversation over the call WebSocket. Lines typed (or piped in) are sent one at a
 * time: the first once the greeting is shown (call_started says one comes), each next one once
 * the answer to the previous one is done (`turn_done`), so a script's `/end` does not cut its
 * last question off. `/end` and the end of the input hang up after the answer in progress;
 * Ctrl-C hangs up at once (the call ends `client_ended`), and a second Ctrl-C leaves without
 * waiting for the service (`interrupted`).
 */
export function converse(websocketUrl: string, io: ConversationIo): Promise<ConversationEnd> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(websocketUrl);
    const transcript = new Transcript(io.output);
    const queue: Outgoing[] = [];
    let callId: string | null = null;
    let busy = true; // until call_started, and its greeting when it says one comes
    let greeting = false; // the greeting call_started announced has not arrived yet
    let cutIn = false; // Ctrl-C: the end goes out now, not after the answer in progress
    let answered = false; // the server reacted to the message in flight beyond refusing it
    let hangingUp = false;
    let ended: ConversationEnd | null = null;
    let rl: Interface | null = null;

    const prompt = () => {
      if (io.interactive && !busy && !hangingUp && queue.length === 0) rl?.prompt();
    };
    const pump = () => {
      if ((busy && !cutIn) || callId === null || ended || socket.readyState !== WebSocket.OPEN) return;
      const next = queue.shift();
      if (!next) return prompt();
      busy = true;
      answered = false;
      if (next.type === 'end') hangingUp = true;
      else if (!io.interactive) transcript.line(`you: ${next.text}`);
      socket.send(JSON.stringify(next));
    };
    const hangUp = () => {
      if (!queue.some((m) => m.type === 'end') && !hangingUp) queue.push({ type: 'end' });
      pump();
    };
    const interrupt = () => {
      if (ended) return;
      if (cutIn) {
        // The second Ctrl-C: the service has not ended the call yet; stop waiting for it.
        socket.terminate();
        return finish({ callId, reason: 'interrupted' });
      }
      cutIn = true;
      if (hangingUp) return; // the end is on its way already
      queue.length = 0;
      queue.push({ type: 'end' });
      pump();
    };
    const unregister = io.onInterrupt?.(interrupt);
    const fail = (err: Error) => {
      unregister?.();
      reject(err);
    };
    const finish = (end: ConversationEnd) => {
      if (ended) return;
      ended = end;
      unregister?.();
      rl?.close();
      resolve(end);
    };

    socket.on('unexpected-response', (_req, res) => {
      fail(new Error(`The call socket was refused with HTTP ${res.statusCode}${res.statusCode === 401 ? ' (its token works once, for 60 s)' : ''}`));
      res.resume();
    });
    socket.on('error', (err) => {
      if (!ended) fail(new Error(`The call socket failed: ${err.message}`));
    });
    socket.on('close', () => finish({ callId, reason: ended?.reason ?? 'disconnected' }));
    socket.on('message', (data, isBinary) => {
      if (isBinary) return; // a text conversation has no audio
      const frame = JSON.parse((data as Buffer).toString('utf8')) as ServerFrame;
      transcript.show(frame);
      if (frame.type === 'call_started') {
        callId = frame.callId;
        greeting = frame.greeting === true;
        busy = greeting;
        pump();
      } else if (frame.type === 'assistant_message' && greeting) {
        greeting = false;
        busy = false;
        pump();
      } else if (frame.type === 'turn_done') {
        busy = false;
        pump();
      } else if (frame.type === 'call_ended') {
        finish({ callId, reason: frame.reason });
      } else if (frame.type === 'error' && busy && !answered && !hangingUp) {
        // A refused message ("the call goes on"): no answer and no turn_done will come for it.
        busy = false;
        pump();
      } else if (frame.type !== 'error') {
        answered = true;
      }
    });
    socket.on('open', () => {
      rl = createInterface({ input: io.input, ...(io.interactive ? { output: io.output, prompt: 'you: ' } : {}), terminal: io.interactive });
      rl.on('line', (raw) => {
        const text = raw.trim();
        if (!text) return prompt();
        if (text === '/end') return hangUp();
        if (text.length > MAX_USER_TEXT) {
          transcript.line(`error: a message is at most ${MAX_USER_TEXT} characters; not sent`);
          return prompt();
        }
        queue.push({ type: 'user_message', text });
        pump();
      });
      rl.on('close', () => {
        if (!ended) hangUp();
      });
      rl.on('SIGINT', interrupt);
    });
  });
}
