import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError } from '../config.ts';
import { BARESIP, startBaresip, type Baresip } from '../lab/baresip.ts';
import { KAMAILIO, PROXY_CONFIG, startKamailio, type Kamailio } from '../lab/kamailio.ts';
import { clearLeftovers, recordProcesses, runningLab, stopRunningLab, writeSilence } from '../lab/leftovers.ts';
import { portIsFree } from '../lab/ports.ts';
import { id, port } from './arguments.ts';
import { openScope, type ScopeOptions } from './ascode/scope.ts';
import type { CliIo, Outcome } from './io.ts';
import { LAB_CREDENTIAL_NAME, provisionTrunk, removeTrunk, type Provisioned } from './lab-trunk.ts';
import { labGuide, phoneLine } from './lab-guide.ts';

interface LabOptions extends ScopeOptions {
  phone: string;
  number: string;
  sipPort: number;
  rtpPorts: string;
  dir: string;
  autoAnswer?: boolean;
  stop?: boolean;
}

const E164 = /^\+[1-9]\d{6,14}$/;
/** The user Parley registers at the lab's Kamailio as: calls to the lab's number are delivered to it. */
const TRUNK_USER = 'parley-lab';
/** The phone's microphone: silence, long enough for any lab call (the call ends when the file does). */
const SILENCE_SECONDS = 600;

function e164(value: string): string {
  if (!E164.test(value)) throw new InvalidArgumentError('Expected an E.164 number such as +12125550100.');
  return value;
}

/** Kamailio and baresip from Debian's packages, or one line saying what to install. */
function checkInstalled(): void {
  const missing = [[KAMAILIO, 'kamailio'], [BARESIP, 'baresip-core']].filter(([path]) => !existsSync(path as string));
  if (missing.length > 0) {
    throw new ConfigError(`parley lab runs Kamailio and baresip from Debian's packages; missing ${missing.map(([path]) => path).join(' and ')}: sudo apt-get install -y ${missing.map(([, pkg]) => pkg).join(' ')}`);
  }
}

/** The port asked for when it is free for UDP and TCP, else one the kernel picks; and a line saying which. */
async function trunkPort(wanted: number): Promise<{ port: number | undefined; note: string }> {
  if (await portIsFree(wanted)) return { port: wanted, note: '' };
  return { port: undefined, note: ` (${wanted} is taken, so a free port was picked)` };
}

/**
 * `parley lab`: a SIP trunk (Kamailio) and a softphone (baresip) on this machine, with the
 * credentials and the number in the organization that point at them, until Ctrl-C.
 */
export function labCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  return new Command('lab')
    .summary('a local SIP trunk and softphone to make calls with (Kamailio and baresip)')
    .description('Start a SIP trunk (Kamailio) and a softphone (baresip) on 127.0.0.1 with generated configurations, register the phone under --phone, and create in the organization (through the API) the SIP credentials "parley lab" and the number --number on them.\nThen a task of an agent with that number calls the phone; type a (answer), h (hang up) or d <number> (dial) here. Ctrl-C stops both and removes the credentials and the number. See docs/getting-started.md, "Make a phone ring".')
    .option('--url <url>', 'the Parley service (env: PARLEY_URL; default http://127.0.0.1:$PORT, else 8080)')
    .option('--token <token>', 'an API token of the organization with SIP write (env: PARLEY_TOKEN; the parley setup token)')
    .option('--vendor <id>', 'the vendor of the organization (env: PARLEY_VENDOR)', id)
    .option('--organization <id>', 'the organization (env: PARLEY_ORGANIZATION)', id)
    .option('--phone <number>', 'the softphone\'s number: what a task calls', e164, '+12125550100')
    .option('--number <number>', 'the number Parley gets on the lab\'s trunk: the caller id of task calls, and what the phone dials to reach an assistant', e164, '+12125550199')
    .option('--sip-port <port>', 'the trunk\'s UDP and TCP port; a free one when it is taken', port, 5080)
    .option('--rtp-ports <range>', 'the softphone\'s RTP ports', '31000-31099')
    .option('--dir <dir>', 'where the generated configurations and the phone\'s recordings go', 'data/lab')
    .option('--auto-answer', 'the phone answers every call at once')
    .option('--stop', 'stop the lab running with --dir (as Ctrl-C in its terminal would) and wait until it has cleaned up')
    .action(async (options: LabOptions) => {
      if (options.stop) {
        const pid = await stopRunningLab(resolve(options.dir), 30_000);
        io.stdout.write(pid === null ? `No lab runs with ${options.dir}.\n` : `Stopped the lab (pid ${pid}).\n`);
        return done(0);
      }
      checkInstalled();
      const { org, organization } = openScope(io, options, 'lab');
      const dir = resolve(options.dir);
      const other = runningLab(dir);
      if (other !== null) throw new ConfigError(`A lab already runs with ${options.dir} (pid ${other}): stop it first (Ctrl-C in its terminal, or parley lab --stop), or give this one another --dir`);
      const left = await clearLeftovers(dir);
      if (left.length > 0) io.stdout.write(`Stopped what a lab run before left running: ${left.join(', ')}.\n`);
      await mkdir(dir, { recursive: true });
      const password = randomBytes(12).toString('hex');
      let { port: wanted, note } = await trunkPort(options.sipPort);
      let kamailio: Kamailio | null = null;
      let phone: Baresip | null = null;
      let provisioned: Provisioned | null = null;
      const stop = async (): Promise<void> => {
        await phone?.stop();
        await kamailio?.stop();
        await rm(dir, { recursive: true, force: true, maxRetries: 3 });
        if (!provisioned) return;
        const kept = await removeTrunk(org, provisioned);
        io.stdout.write(kept.length === 0
          ? `Stopped the phone and the trunk, and removed the SIP credentials "${LAB_CREDENTIAL_NAME}" and the number ${options.number}.\n`
          : `Stopped the phone and the trunk. Left in the organization (the next parley lab reuses them):\n${kept.map((k) => `  ${k}\n`).join('')}`);
      };
      try {
        const trunkOn = (port: number | undefined) => startKamailio({
          config: PROXY_CONFIG, dir: join(dir, 'kamailio'), ...(port ? { port } : {}),
          values: {
            USERNAME: TRUNK_USER, PASSWORD: password, ALGORITHM: 'MD5', DID: options.number,
            // Parley's task calls come from the lab's number: the trunk asks them for the credentials' password.
            AUTH_FROM: `^[+]${options.number.slice(1)}$`, REFUSE_REFER_TO: '^never$',
          },
        });
        // The port found free may be taken before Kamailio binds it (another program starting): then a free one.
        kamailio = await trunkOn(wanted).catch(async (err: unknown) => {
          if (wanted === undefined) throw err;
          note = ` (${wanted} was taken as the trunk started, so a free port was picked)`;
          wanted = undefined;
          return trunkOn(undefined);
        });
        const source = join(dir, 'silence.wav');
        await writeSilence(source, SILENCE_SECONDS);
        phone = await startBaresip({
          user: options.phone, registrar: { host: kamailio.host, port: kamailio.udpPort }, source, rtpPorts: options.rtpPorts,
          answerMode: options.autoAnswer ? 'auto' : 'manual', dir: join(dir, 'phone'),
        });
        await recordProcesses(dir, { lab: process.pid, kamailio: kamailio.pid, baresip: phone.pid });
        provisioned = await provisionTrunk(org, { hostname: kamailio.host, port: kamailio.udpPort, username: TRUNK_USER, password }, options.number);
      } catch (err) {
        await stop();
        throw err;
      }
      io.stdout.write(labGuide({ kamailio, phone, provisioned, organization, note, options }));
      const trunk = kamailio;
      const softphone = phone;
      // baresip may report one incoming call more than once: it rings once per call.
      const rung = new Set<unknown>();
      softphone.onEvent((event) => {
        if (event.type === 'CALL_INCOMING') {
          if (rung.has(event.id ?? event.peeruri)) return;
          rung.add(event.id ?? event.peeruri);
        }
        if (event.type === 'CALL_CLOSED') rung.delete(event.id ?? event.peeruri);
        const line = phoneLine(event, Boolean(options.autoAnswer), softphone.dir);
        if (line) io.stdout.write(`${line}\n`);
      });
      // The terminal drives the phone; the end of piped input does not stop the lab (Ctrl-C does).
      const lines = createInterface({ input: io.stdin, terminal: false });
      // Kept until the clean-up is done: under npx a Ctrl-C arrives twice (from the terminal, and
      // forwarded by npm), and the second must not kill the lab half way through it.
      let quit = (): void => undefined;
      process.on('SIGINT', () => quit());
      process.on('SIGTERM', () => quit());
      await new Promise<void>((finish) => {
        quit = finish;
        lines.on('line', (text) => {
          const [word, arg] = text.trim().split(/\s+/);
          const send = (command: string, params?: string) => softphone.command(command, params).then((r) => {
            if (!r.ok) io.stdout.write(`phone: ${command} refused: ${r.data.trim()}\n`);
          }, (err: unknown) => io.stdout.write(`phone: ${err instanceof Error ? err.message : String(err)}\n`));
          if (word === 'a' || word === 'answer') void send('accept');
          else if (word === 'h' || word === 'hangup') void send('hangup');
          else if ((word === 'd' || word === 'dial') && arg && E164.test(arg)) void send('dial', `sip:${arg}@${trunk.host}:${trunk.udpPort}`);
          else if (word === 'q' || word === 'quit') quit();
          else if (word) io.stdout.write('Type a (answer), h (hang up), d <number> (dial, e.g. d +12125550199) or q (quit).\n');
        });
      });
      lines.close();
      await stop();
      done(0);
    });
}
