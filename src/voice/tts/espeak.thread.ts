// eSpeak NG's thread (see espeak-engine.ts for why it runs beside the event loop). Each job
// carries a shared flag the main thread sets to stop it: the synthesis callback returns 1 to
// make eSpeak stop where it is.
import { threadData, threadPort } from '../thread.ts';
import type { EspeakJob, FromEspeakThread } from './espeak-engine.ts';

/** What the emscripten module gives (it ships no types). */
interface ESpeakNg {
  get_samplerate(): number;
  set_voice(voice: string): number;
  set_rate(wordsPerMinute: number): void;
  synthesize(text: string, chunk: (samples: Float32Array | Int16Array | null) => number): void;
}

const port = threadPort();
const send = (message: FromEspeakThread, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);
const errorText = (error: unknown) => String((error as Error | null)?.message ?? error);

async function start(): Promise<void> {
  let engine: ESpeakNg;
  try {
    const { moduleUrl } = threadData<{ moduleUrl: string }>();
    const { default: load } = (await import(moduleUrl)) as { default: () => Promise<{ eSpeakNGWorker: new () => ESpeakNg }> };
    engine = new (await load()).eSpeakNGWorker();
  } catch (error) {
    // The starter terminates the thread on this answer.
    return send({ kind: 'load-failed', message: errorText(error) });
  }
  port.on('message', (job: EspeakJob) => speak(engine, job));
  send({ kind: 'ready', sampleRate: engine.get_samplerate() });
}

function speak(engine: ESpeakNg, job: EspeakJob): void {
  const stop = new Int32Array(job.stop);
  if (Atomics.load(stop, 0) === 1) return send({ kind: 'end', id: job.id });
  if (engine.set_voice(job.voice) !== 0) return send({ kind: 'fail', id: job.id, message: `unknown espeak voice ${JSON.stringify(job.voice)}` });
  engine.set_rate(job.wordsPerMinute);
  try {
    engine.synthesize(job.text, (samples) => {
      if (Atomics.load(stop, 0) === 1) return 1;
      if (samples && samples.length > 0) {
        const pcm = Int16Array.from(samples);
        send({ kind: 'chunk', id: job.id, pcm }, [pcm.buffer]);
      }
      return 0;
    });
    send({ kind: 'end', id: job.id });
  } catch (error) {
    send({ kind: 'fail', id: job.id, message: errorText(error) });
  }
}

void start();
