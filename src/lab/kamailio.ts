// Runs Kamailio (Debian's package) on loopback with a generated configuration: the lab's trunk
// (parley lab) and the SIP tests' registrar and proxy. Everything it needs (config, ctl socket,
// runtime dir) lives in one folder, removed when it stops.
import { execFile, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freeTcpPort, freeUdpPort } from './ports.ts';

export const KAMAILIO = '/usr/sbin/kamailio';
const KAMCMD = '/usr/sbin/kamcmd';
const MODULE_PATH = '/usr/lib/x86_64-linux-gnu/kamailio/modules/';
/** The registrar and record-routing proxy the lab and the call tests run (docs/sip.md). */
export const PROXY_CONFIG = new URL('../../docs/kamailio/proxy.cfg', import.meta.url);
const run = promisify(execFile);

export interface KamailioOptions {
  /** The config: its {{NAME}} placeholders take UDP_PORT, TCP_PORT, CTL_SOCKET, MODULE_PATH, DIR and `values`. */
  config: URL;
  values: Record<string, string>;
  /** Written into the run folder first, templated the same way (a dispatcher list, say). */
  files?: Record<string, URL>;
  /** The run folder (created, and removed on stop); a new temporary one when absent. */
  dir?: string;
  /** The UDP and TCP port to listen on (free for both); free ones the kernel picks when absent. */
  port?: number;
}

export interface Kamailio {
  host: '127.0.0.1';
  udpPort: number;
  tcpPort: number;
  /** The main process; its workers are in the process group of that id. */
  pid: number;
  /** Runs an RPC command (kamcmd) and answers its output. */
  rpc(...args: string[]): Promise<string>;
  /** Number of contacts Kamailio currently holds for `user`. */
  bindings(user: string): Promise<number>;
  stop(): Promise<void>;
}

/** Sends an OPTIONS and resolves with the status line, proving a SIP worker is up. */
async function sipPing(port: number, timeoutMs: number): Promise<string | null> {
  const sock = dgram.createSocket('udp4');
  sock.on('error', () => undefined);
  try {
    return await new Promise<string | null>((resolve) => {
      const timer = setTimeout(() => resolve(null), timeoutMs);
      sock.on('message', (msg) => {
        clearTimeout(timer);
        resolve(msg.toString('utf8').split('\r\n')[0] ?? null);
      });
      sock.bind(0, '127.0.0.1', () => {
        const { port: local } = sock.address();
        const ping = [
          'OPTIONS sip:127.0.0.1 SIP/2.0',
          `Via: SIP/2.0/UDP 127.0.0.1:${local};branch=z9hG4bKping${Date.now()};rport`,
          'From: <sip:ping@127.0.0.1>;tag=ping',
          'To: <sip:127.0.0.1>',
          `Call-ID: ping-${Date.now()}@harness`,
          'CSeq: 1 OPTIONS',
          'Max-Forwards: 70',
          'Content-Length: 0',
          '',
          '',
        ].join('\r\n');
        sock.send(ping, port, '127.0.0.1');
      });
    });
  } finally {
    sock.close();
  }
}

/** Whether a process group still has a member. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

export async function startKamailio(options: KamailioOptions): Promise<Kamailio> {
  if (!existsSync(KAMAILIO) || !existsSync(KAMCMD)) {
    throw new Error(`Kamailio is not installed (${KAMAILIO}); run: apt-get install -y kamailio`);
  }
  const dir = options.dir ?? await mkdtemp(join(tmpdir(), 'parley-kamailio-'));
  await mkdir(dir, { recursive: true });
  const ctlSocket = join(dir, 'ctl.sock');
  const [udpPort, tcpPort] = options.port ? [options.port, options.port] : [await freeUdpPort(), await freeTcpPort()];
  const values: Record<string, string> = {
    UDP_PORT: String(udpPort),
    TCP_PORT: String(tcpPort),
    CTL_SOCKET: ctlSocket,
    MODULE_PATH,
    DIR: dir,
    ...options.values,
  };
  const cfgPath = join(dir, 'kamailio.cfg');
  const fill = (template: string) => template.replace(/\{\{([A-Z_]+)\}\}/g, (_, key: string) => {
    const v = values[key];
    if (v === undefined) throw new Error(`kamailio template: no value for {{${key}}}`);
    return v;
  });
  try {
    for (const [name, url] of Object.entries(options.files ?? {})) await writeFile(join(dir, name), fill(await readFile(url, 'utf8')));
    await writeFile(cfgPath, fill(await readFile(options.config, 'utf8')));
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }

  const child = spawn(KAMAILIO, ['-DD', '-E', '-f', cfgPath, '-Y', dir, '-w', dir, '-m', '32', '-M', '4'], {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Own process group, so stop() can also reach forked workers by this group id.
    detached: true,
  });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString('utf8')).slice(-8000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let running = true;
  void exited.then(() => (running = false));

  const kamcmd = async (...args: string[]): Promise<string> => (await run(KAMCMD, ['-s', `unix:${ctlSocket}`, ...args], { timeout: 3000 })).stdout;

  const stop = async (): Promise<void> => {
    const pid = child.pid;
    if (pid !== undefined) {
      if (running) process.kill(pid, 'SIGTERM');
      // The main process reaps its workers on SIGTERM; wait for the whole group
      // so none of them writes into the folder while it is being removed.
      const until = Date.now() + 3000;
      while (groupAlive(pid) && Date.now() < until) await new Promise((r) => setTimeout(r, 50));
      if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
      await exited;
    }
    await rm(dir, { recursive: true, force: true, maxRetries: 3 });
  };

  const deadline = Date.now() + 10_000;
  for (;;) {
    if (!running) {
      await stop();
      throw new Error(`kamailio exited during start-up:\n${output}`);
    }
    const version = await kamcmd('core.version').catch(() => '');
    const status = version.includes('kamailio') ? await sipPing(udpPort, 300) : null;
    if (status?.startsWith('SIP/2.0 ')) break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`kamailio did not answer within 10 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }

  return {
    host: '127.0.0.1',
    udpPort,
    tcpPort,
    pid: child.pid as number,
    rpc: kamcmd,
    async bindings(user: string): Promise<number> {
      const out = await kamcmd('ul.lookup', 'location', user);
      // kamcmd exits 0 even on RPC errors; an unknown AOR is reported as text.
      if (/AOR not found/i.test(out)) return 0;
      if (/^error/im.test(out)) throw new Error(`kamcmd ul.lookup failed: ${out.trim()}`);
      return (out.match(/^\s*Contact:\s*\{/gm) ?? []).length;
    },
    stop,
  };
}
