import { Gauge, type Registry } from 'prom-client';
import type { LatenessStats } from './lateness.ts';

/**
 * Two gauges on /metrics for a histogram's figures: `<prefix>_frame_lateness_ms` by quantile
 * (0.5, 0.99, and 1 for the maximum) and `<prefix>_frames_sent`.
 */
export function latenessGauges(registry: Registry, prefix: string, what: { lateness: string; frames: string }, read: () => LatenessStats): void {
  new Gauge({
    name: `${prefix}_frame_lateness_ms`, help: what.lateness, labelNames: ['quantile'], registers: [registry],
    collect() {
      const stats = read();
      this.set({ quantile: '0.5' }, stats.p50Ms);
      this.set({ quantile: '0.99' }, stats.p99Ms);
      this.set({ quantile: '1' }, stats.maxMs);
    },
  });
  new Gauge({ name: `${prefix}_frames_sent`, help: what.frames, registers: [registry], collect() { this.set(read().frames); } });
}
