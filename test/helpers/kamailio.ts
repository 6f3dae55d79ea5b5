// Runs a throwaway Kamailio registrar on loopback for SIP integration tests.
// Everything it needs (config, ctl socket, runtime dir) lives in one mkdtemp folder.
import { execFile, spawn } from 'node:child_process';
import dgram from 'node:dgram';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const KAMAILIO = '/usr/sbin/kamailio';
const KAMCMD = '/usr/sbin/kamcmd';
const MODULE_PATH = '/usr/lib/x86_64-linux-gnu/kamailio/modules/';
const TEMPLATES = {
  registrar: new URL('../fixtures/kamailio/kamailio.cfg.template', import.meta.url),
  proxy: new URL('../fixtures/kamailio/proxy.cfg.template', import.meta.url),
};
const run = promisify(execFile);

export interface KamailioOptions {
  /** Digest algorithm Kamailio challenges with. */
  algorithm?: 'MD5' | 'SHA-256';
  /** 'registrar' (default): REGISTER only. 'proxy': registrar plus record-routing proxy for calls. */
  template?: 'registrar' | 'proxy';
  /** proxy: the number delivered to the registration of `username`. */
  did?: string;
  /** proxy: INVITEs whose From user matches this regular expression must authenticate (407). */
  authFrom?: string;
  /**
   * Another config to run (docs/kamailio/dispatcher.cfg): its {{NAME}} placeholders take the
   * usual values, DIR (the run folder) and `values`. `files` are written into DIR first,
   * templated the same way (a dispatcher list, say).
   */
  config?: URL;
  values?: Record<string, string>;
  files?: Record<string, URL>;
}

export interface Kamailio {
  host: '127.0.0.1';
  udpPort: number;
  tcpPort: number;
  username: string;
  password: string;
  /** Runs an RPC command (kamcmd) and answers its output. */
  rpc(...args: string[]): Promise<string>;
  /** Number of contacts Kamailio currently holds for `user`. */
  bindings(user: string): Promise<number>;
  stop(): Promise<void>;
}

export async function freeTcpPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

export async function freeUdpPort(): Promise<number> {
  const sock = dgram.createSocket('udp4');
  await new Promise<void>((resolve, reject) => sock.once('error', reject).bind(0, '127.0.0.1', resolve));
  const { port } = sock.address();
  await new Promise<void>((resolve) => sock.close(() => resolve()));
  return port;
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

export async function startKamailio(options: KamailioOptions = {}): Promise<Kamailio> {
  if (!existsSync(KAMAILIO) || !existsSync(KAMCMD)) {
    throw new Error(`Kamailio is not installed (${KAMAILIO}); run: apt-get install -y kamailio`);
  }
  const dir = await mkdtemp(join(tmpdir(), 'parley-kamailio-'));
  const ctlSocket = join(dir, 'ctl.sock');
  const [udpPort, tcpPort] = [await freeUdpPort(), await freeTcpPort()];
  const username = 'alice';
  const password = `pw-${Math.random().toString(36).slice(2, 10)}`;
  const values: Record<string, string> = {
    UDP_PORT: String(udpPort),
    TCP_PORT: String(tcpPort),
    CTL_SOCKET: ctlSocket,
    MODULE_PATH,
    USERNAME: username,
    PASSWORD: password,
    ALGORITHM: options.algorithm ?? 'MD5',
    DID: options.did ?? '+15550199',
    AUTH_FROM: options.authFrom ?? '^[+]1555000',
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
    await writeFile(cfgPath, fill(await readFile(options.config ?? TEMPLATES[options.template ?? 'registrar'], 'utf8')));
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

  // Workers are in the group whose id is our child's pid (detached: true).
  const groupAlive = (pid: number): boolean => {
    try {
      process.kill(-pid, 0);
      return true;
    } catch {
      return false;
    }
  };
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
    username,
    password,
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
