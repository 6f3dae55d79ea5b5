import { fileURLToPath } from 'node:url';
import * as ort from 'onnxruntime-node';

/** Silero VAD v5 at 16 kHz reads 512 new samples per step ... */
export const SILERO_WINDOW = 512;
/** ... after the last 64 samples of the step before (the context its convolutions look back on). */
export const SILERO_CONTEXT = 64;
const STATE_SIZE = 2 * 1 * 128; // the recurrent state tensor [2, batch 1, 128]
const SAMPLE_RATE = 16000n;

/** Where the Silero VAD v5 model is: vendored in models/ with its licence (the same path from src/ and from dist/). */
export function sileroModelPath(): string {
  return fileURLToPath(new URL('../../models/silero-vad/silero_vad_v5.onnx', import.meta.url));
}

export interface SileroStep {
  probability: number;
  state: Float32Array;
}

/**
 * The loaded model: one per process, shared by every call. It holds no per-call state; each
 * caller keeps its own recurrent state and context and passes them in.
 */
export interface SileroModel {
  /** input: context + window (576 floats in -1..1); state: the last step's state or zeros. */
  step(input: Float32Array, state: Float32Array): Promise<SileroStep>;
  initialState(): Float32Array;
  close(): Promise<void>;
}

/**
 * Loads Silero VAD from the file shipped inside node_modules (nothing is downloaded). One
 * intra-op and one inter-op thread: a step is tiny, and calls run side by side on the event
 * loop's thread pool rather than fighting over cores inside one step.
 */
export async function loadSileroModel(modelPath: string = sileroModelPath()): Promise<SileroModel> {
  const session = await ort.InferenceSession.create(modelPath, {
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    logSeverityLevel: 3,
  });
  const sampleRate = new ort.Tensor('int64', BigInt64Array.of(SAMPLE_RATE), []);
  return {
    initialState: () => new Float32Array(STATE_SIZE),
    async step(input, state) {
      const out = await session.run({
        input: new ort.Tensor('float32', input, [1, input.length]),
        state: new ort.Tensor('float32', state, [2, 1, 128]),
        sr: sampleRate,
      });
      const probability = (out.output!.data as Float32Array)[0]!;
      return { probability, state: out.stateN!.data as Float32Array };
    },
    close: () => session.release(),
  };
}
