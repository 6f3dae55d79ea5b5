// Runs baresip (Debian's baresip-core) on loopback as a phone: the lab's softphone (parley lab)
// and the SIP tests' far end. It plays a WAV as its microphone (aufile), records what it hears
// and what it sends (sndfile), and is driven over its ctrl_tcp socket (JSON in netstrings),
// whose event stream also tells us what the phone saw.
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeTcpPort, freeUdpPort } from './ports.ts';

export const BARESIP = '/usr/bin/baresip';
const MODULES = '/usr/lib/baresip/modules';

export interface BaresipOptions {
  /** The phone's user, e.g. '+15550101'. */
  user: string;
  /** Register there (and route calls through it); without it the phone only listens. */
  registrar?: { host: string; port: number };
  /** WAV (8 kHz mono 16-bit) played as the microphone; the call ends when it ends. */
  source: string;
  /** RTP port range of this phone, e.g. '20200-20299'. */
  rtpPorts: string;
  /** auto (default): every call is answered at once; manual: `accept` answers a ringing call. */
  answerMode?: 'auto' | 'manual';
  /** The phone's folder (created, and removed on stop); a new temporary one when absent. */
  dir?: string;
}

export interface BaresipEvent {
  type: string;
  /** performance.now() when the event reached the test. */
  at?: number;
  class?: string;
  param?: string;
  direction?: string;
  peeruri?: string;
  [key: string]: unknown;
}

export interface Baresip {
  aor: string;
  sipPort: number;
  dir: string;
  pid: number;
  events: BaresipEvent[];
  /** Called with every event from now on (the lab prints them). */
  onEvent(listener: (event: BaresipEvent) => void): void;
  command(command: string, params?: string): Promise<{ ok: boolean; data: string }>;
  waitEvent(type: string, predicate?: (e: BaresipEvent) => boolean, timeoutMs?: number): Promise<BaresipEvent>;
  /** The WAVs of the last call: what the phone heard (dec) and what it sent (enc). */
  recordings(): Promise<{ heard: string; sent: string }>;
  stop(): Promise<void>;
}

/** Netstring framing: "len:payload," repeated. */
function netstrings(onMessage: (text: string) => void): (chunk: Buffer) => void {
  let buf = Buffer.alloc(0);
  return (chunk) => {
    buf = Buffer.concat([buf, chunk]);
    for (;;) {
      const colon = buf.indexOf(0x3a);
      if (colon === -1) return;
      const len = Number(buf.toString('ascii', 0, colon));
      if (buf.length < colon + 1 + len + 1) return;
      onMessage(buf.toString('utf8', colon + 1, colon + 1 + len));
      buf = buf.subarray(colon + 2 + len);
    }
  };
}

interface Launched {
  child: ChildProcess;
  socket: net.Socket;
  sipPort: number;
  aor: string;
  exited: Promise<void>;
  log: { text: string };
}

/**
 * Writes the config and starts baresip. The SIP port must be free for UDP and TCP alike and
 * a port the kernel said was free can be taken meanwhile, so "Address already in use" means
 * another try on other ports.
 */
async function launch(options: BaresipOptions, dir: string): Promise<Launched> {
  for (let attempt = 0; ; attempt++) {
    const [sipPort, ctrlPort] = [await freeUdpPort(), await freeTcpPort()];
    const domain = options.registrar ? `${options.registrar.host}:${options.registrar.port}` : `127.0.0.1:${sipPort}`;
    const aor = `sip:${options.user}@${domain}`;
    await writeFile(join(dir, 'config'), [
      'poll_method epoll',
      // Loopback in SDP too: the tests contact nothing else.
      'net_interface 127.0.0.1',
      `sip_listen 127.0.0.1:${sipPort}`,
      'call_local_timeout 30',
      'call_max_calls 4',
      `audio_source aufile,${options.source}`,
      `rtp_ports ${options.rtpPorts}`,
      'rtcp_mux no',
      // Up to half a second: a loaded test machine delivers our packets in bursts.
      'jitter_buffer_delay 2-25',
      `module_path ${MODULES}`,
      'module g711.so',
      'module aufile.so',
      'module sndfile.so',
      'module_app account.so',
      'module_app ctrl_tcp.so',
      'module_app menu.so',
      `ctrl_tcp_listen 127.0.0.1:${ctrlPort}`,
      `snd_path ${dir}`,
      '',
    ].join('\n'));
    const regint = options.registrar ? 'regint=600' : 'regint=0';
    await writeFile(join(dir, 'accounts'), `<${aor}>;${regint};answermode=${options.answerMode ?? 'auto'};audio_codecs=PCMU/8000/1,PCMA/8000/1;ptime=20\n`);
    await writeFile(join(dir, 'contacts'), '');

    const child = spawn(BARESIP, ['-f', dir], { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const log = { text: '' };
    const collect = (chunk: Buffer): void => {
      log.text = (log.text + chunk.toString('utf8')).slice(-8000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    const deadline = Date.now() + 10_000;
    for (;;) {
      const socket = await new Promise<net.Socket | null>((resolve) => {
        const s = net.connect(ctrlPort, '127.0.0.1', () => resolve(s));
        s.once('error', () => resolve(null));
      });
      if (socket) return { child, socket, sipPort, aor, exited, log };
      if (child.exitCode !== null || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill('SIGKILL');
    await exited;
    if (attempt < 3 && /Address already in use/.test(log.text)) continue;
    await rm(dir, { recursive: true, force: true });
    throw new Error(`baresip did not start:\n${log.text}`);
  }
}

export async function startBaresip(options: BaresipOptions): Promise<Baresip> {
  if (!existsSync(BARESIP)) throw new Error('baresip is not installed; run: apt-get install -y baresip-core');
  const dir = options.dir ?? await mkdtemp(join(tmpdir(), 'parley-baresip-'));
  await mkdir(dir, { recursive: true });
  const launched = await launch(options, dir);
  const { child, socket, sipPort, aor, exited, log } = launched;
  const output = (): string => log.text;
  const events: BaresipEvent[] = [];
  const waiters = new Set<() => void>();
  const listeners: Array<(event: BaresipEvent) => void> = [];
  const responses = new Map<string, (r: { ok: boolean; data: string }) => void>();
  const deadline = Date.now() + 10_000;
  socket.on('data', netstrings((text) => {
    const msg = JSON.parse(text) as Record<string, unknown>;
    if (msg.response) responses.get(String(msg.token))?.({ ok: Boolean(msg.ok), data: typeof msg.data === 'string' ? msg.data : '' });
    if (msg.event) {
      const event = { ...msg, at: performance.now() } as BaresipEvent;
      events.push(event);
      for (const w of [...waiters]) w();
      for (const listener of listeners) listener(event);
    }
  }));
  socket.on('error', () => undefined);
  let tokens = 0;

  const phone: Baresip = {
    aor,
    sipPort,
    dir,
    pid: child.pid as number,
    events,
    onEvent(listener) {
      listeners.push(listener);
    },
    command(command, params) {
      const token = String(++tokens);
      const body = JSON.stringify({ command, params: params ?? '', token });
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`baresip did not answer ${command}`)), 10_000);
        responses.set(token, (r) => {
          clearTimeout(timer);
          responses.delete(token);
          resolve(r);
        });
        socket?.write(`${Buffer.byteLength(body)}:${body},`);
      });
    },
    waitEvent(type, predicate = () => true, timeoutMs = 15_000) {
      return new Promise((resolve, reject) => {
        let seen = 0;
        const check = (): void => {
          for (; seen < events.length; seen++) {
            const e = events[seen];
            if (e && e.type === type && predicate(e)) {
              waiters.delete(check);
              clearTimeout(timer);
              return resolve(e);
            }
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`baresip: no ${type} event within ${timeoutMs} ms; saw ${events.map((e) => e.type).join(', ')}\n${output()}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
    async recordings() {
      // A command round trip after CALL_CLOSED: baresip handles it only after the call
      // (and the sndfile writer with it) has been torn down.
      await phone.command('listcalls');
      const files = (await readdir(dir)).filter((f) => f.startsWith('dump-')).sort();
      const heard = files.filter((f) => f.endsWith('-dec.wav')).at(-1);
      const sent = files.filter((f) => f.endsWith('-enc.wav')).at(-1);
      if (!heard || !sent) throw new Error(`baresip recorded nothing in ${dir}: ${files.join(', ')}`);
      return { heard: join(dir, heard), sent: join(dir, sent) };
    },
    async stop() {
      socket?.destroy();
      if (child.exitCode === null && child.pid !== undefined) {
        process.kill(child.pid, 'SIGTERM');
        const timer = setTimeout(() => child.kill('SIGKILL'), 3000);
        await exited;
        clearTimeout(timer);
      }
      await rm(dir, { recursive: true, force: true, maxRetries: 3 });
    },
  };
  if (options.registrar) {
    // The REGISTER may well be answered before our control connection was up, so ask.
    for (;;) {
      const info = await phone.command('reginfo');
      if (/OK\W.*Expires/.test(info.data)) break;
      if (Date.now() > deadline) {
        await phone.stop();
        throw new Error(`baresip did not register: ${info.data}\n${output()}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return phone;
}
