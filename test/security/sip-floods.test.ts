// Hardening III, 5: datagrams of 9,000 one-letter headers (45 KB) cost ~12 ms each to parse, and
// 200 a second held the event loop, /healthz included, for up to 1.8 s. Now a head of more than 256
// lines is refused before any header is read, and the per-source rate limit counts bytes. The SIP
// endpoint runs in the test app's process, so /healthz (app.inject) waits on the same event loop.
import assert from 'node:assert/strict';
import dgram from 'node:dgram';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, it } from 'node:test';
import { buildTestApp } from '../helpers/app.ts';
import type { TestApp } from '../helpers/app.ts';
import { DIALECTS } from '../helpers/dialects.ts';

const HEADERS = Array.from({ length: 9000 }, () => 'a: b').join('\r\n');
const datagram = (n: number): Buffer => Buffer.from(`OPTIONS sip:x@127.0.0.1 SIP/2.0\r\nVia: SIP/2.0/UDP 127.0.3.30:5060;branch=z9hG4bKf${n}\r\nCall-ID: f${n}\r\n${HEADERS}\r\n\r\n`);

/** CPU time (user and system, every thread of the process) per second of wall time. */
const cpuMsPerSecond = (used: NodeJS.CpuUsage, wallMs: number): number => (used.user + used.system) / 1000 / (wallMs / 1000);

/** /healthz latencies (ms), one request every 50 ms for `ms`. */
async function healthz(t: TestApp, ms: number): Promise<number[]> {
  const out: number[] = [];
  const end = performance.now() + ms;
  while (performance.now() < end) {
    const started = performance.now();
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    out.push(performance.now() - started);
    assert.equal(res.statusCode, 200);
    await sleep(50);
  }
  return out;
}

const quantile = (values: number[], q: number): number => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(q * values.length))] ?? 0;

describe('SIP header floods', () => {
  for (const dialect of DIALECTS) {
    it(`5: 200 datagrams a second of 9,000 one-letter headers are refused cheaply and /healthz stays fast (${dialect})`, { timeout: 90_000 }, async () => {
      const t = await buildTestApp(dialect, { PARLEY_DIALER: 'sip', PARLEY_SIP_PORT: '0', PARLEY_RTP_PORTS: '24000-24019' });
      const sock = dgram.createSocket('udp4');
      let timer: NodeJS.Timeout | undefined;
      try {
        const port = t.app.telephony?.endpoint.port ?? 0;
        await new Promise<void>((resolve) => sock.bind(0, '127.0.3.30', resolve));
        const wire = [datagram(1), datagram(2)];
        await healthz(t, 500); // warm: the app was just built
        let cpu = process.cpuUsage();
        const quiet = await healthz(t, 1500);
        const quietCpu = cpuMsPerSecond(process.cpuUsage(cpu), 1500);
        let n = 0;
        const started = performance.now();
        timer = setInterval(() => {
          // Paced by the clock, not by the timer's ticks: 200 a second whatever the timer's lateness.
          for (const due = Math.floor((performance.now() - started) / 5) + 1; n < due; n++) sock.send(wire[n % 2] as Buffer, port, '127.0.0.1');
        }, 10);
        cpu = process.cpuUsage();
        const loud = await healthz(t, 3000);
        const loudCpu = cpuMsPerSecond(process.cpuUsage(cpu), 3000);
        clearInterval(timer);
        const figures = `CPU ${quietCpu.toFixed(0)} ms/s quiet, ${loudCpu.toFixed(0)} ms/s under ${n} datagrams in 3 s; /healthz p50 ${quantile(quiet, 0.5).toFixed(1)} ms quiet, p50 ${quantile(loud, 0.5).toFixed(1)} ms and p90 ${quantile(loud, 0.9).toFixed(1)} ms under the flood`;
        // The work the flood costs, in CPU time (which a busy machine's waits do not inflate): parsing
        // every head took ~340 ms a second on a quiet machine (12 ms a datagram on a busy one), the
        // refusal takes a few. And /healthz stays fast, loosely bounded.
        assert.ok(loudCpu - quietCpu < 120, figures);
        assert.ok(quantile(loud, 0.9) < 250, figures);
        assert.ok(n >= 590, `the flood ran (${n} datagrams)`);
        assert.ok((t.app.telephony?.endpoint.stats().droppedMessages ?? 0) > 0, 'beyond its byte budget the source is not even read');
      } finally {
        clearInterval(timer);
        sock.close();
        await t.close();
      }
    });
  }
});
