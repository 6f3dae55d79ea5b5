// Runs rtpengine (Debian package rtpengine-daemon) in user space on loopback: no kernel
// forwarding table, controlled over its ng protocol (bencoded dictionaries over UDP).
import { spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import { freeUdpPort } from './kamailio.ts';

const RTPENGINE = '/usr/bin/rtpengine';

export interface RtpEngine {
  /** Its ng control address, host:port (Kamailio's rtpengine_sock). */
  ng: string;
  /** The calls it relays now (ng `list`). */
  calls(): Promise<number>;
  stop(): Promise<void>;
}

/** Sends one ng command and answers the bencoded reply (without its cookie); null on timeout. */
async function command(port: number, body: string, timeoutMs: number): Promise<string | null> {
  const sock = dgram.createSocket('udp4');
  sock.on('error', () => undefined);
  const cookie = `parley${Math.random().toString(36).slice(2, 8)}`;
  try {
    return await new Promise<string | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs);
      sock.on('message', (msg) => {
        const text = msg.toString('utf8');
        if (!text.startsWith(`${cookie} `)) return;
        clearTimeout(timer);
        resolve(text.slice(cookie.length + 1));
      });
      sock.send(`${cookie} ${body}`, port, '127.0.0.1');
    });
  } finally {
    sock.close();
  }
}

/** The number of strings in the bencoded list under `calls` (`d5:callsl3:abc…e…e`). */
function countCalls(reply: string): number {
  let at = reply.indexOf('5:callsl');
  if (at < 0) throw new Error(`rtpengine list: unexpected reply ${reply}`);
  at += '5:callsl'.length;
  let n = 0;
  while (reply[at] !== 'e') {
    const colon = reply.indexOf(':', at);
    at = colon + 1 + Number(reply.slice(at, colon));
    n += 1;
  }
  return n;
}

/** One ng `ping`; true when rtpengine answered `pong`. */
async function ping(port: number, timeoutMs: number): Promise<boolean> {
  return (await command(port, 'd7:command4:pinge', timeoutMs))?.includes('pong') ?? false;
}

/** Starts rtpengine with its media ports in `ports` (e.g. { min: 22180, max: 22199 }). */
export async function startRtpEngine(ports: { min: number; max: number }): Promise<RtpEngine> {
  if (!existsSync(RTPENGINE)) throw new Error('rtpengine is not installed; run: apt-get install -y rtpengine-daemon');
  const port = await freeUdpPort();
  const child = spawn(RTPENGINE, [
    '--interface=127.0.0.1', `--listen-ng=127.0.0.1:${port}`, '--foreground', '--table=-1', '--log-stderr',
    `--port-min=${ports.min}`, `--port-max=${ports.max}`,
  ], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const collect = (chunk: Buffer) => (output = (output + chunk.toString('utf8')).slice(-8000));
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
    await exited;
    clearTimeout(timer);
  };
  const deadline = Date.now() + 10_000;
  while (!(await ping(port, 300))) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`rtpengine did not answer its ng ping:\n${output}`);
    }
  }
  return {
    ng: `127.0.0.1:${port}`,
    stop,
    async calls() {
      const reply = await command(port, 'd7:command4:liste', 3000);
      if (reply === null) throw new Error('rtpengine did not answer list');
      return countCalls(reply);
    },
  };
}
