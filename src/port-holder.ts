import { readdirSync, readFileSync, readlinkSync, statSync } from 'node:fs';
import ipaddr from 'ipaddr.js';

export type PortProtocol = 'tcp' | 'udp';

/** Who holds a port: the process when this user may see it, else only the socket's owner (uid). */
export type PortHolder = { pid: number; command: string } | { uid: number };

/** A TCP socket that listens (st 0A); a UDP socket has no listening state, bound is enough. */
const TCP_LISTEN = '0A';
/** A command line is cut here: a process's arguments may be long, the line is for a person. */
const MAX_COMMAND = 160;

/**
 * The address of a /proc/net table in its text form: 32-bit words in hex, each in the host's
 * byte order (little-endian on the machines Parley runs on), one word for IPv4, four for IPv6.
 */
function tableAddress(hex: string): ipaddr.IPv4 | ipaddr.IPv6 {
  const bytes = (hex.match(/.{8}/g) ?? []).flatMap((word) => [6, 4, 2, 0].map((at) => Number.parseInt(word.slice(at, at + 2), 16)));
  const address = ipaddr.fromByteArray(bytes);
  return address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
}

/** Whether a socket bound to `bound` keeps `host` from binding the same port: the same address, or either one all addresses. */
function clashes(bound: ipaddr.IPv4 | ipaddr.IPv6, host: ipaddr.IPv4 | ipaddr.IPv6 | null): boolean {
  if (host === null || bound.range() === 'unspecified' || host.range() === 'unspecified') return true;
  return bound.kind() === host.kind() && bound.toString() === host.toString();
}

/** The address `parley serve` binds, or null (no filtering) for a name or a text ipaddr.js does not read. */
function parsedHost(host: string | undefined): ipaddr.IPv4 | ipaddr.IPv6 | null {
  if (!host || !ipaddr.isValid(host)) return null;
  return ipaddr.process(host);
}

/**
 * The sockets bound to `port` (at an address that clashes with `host`) in the tables of
 * /proc/net (this network namespace), as inode numbers with the owner's uid. Columns: sl
 * local_address rem_address st tx rx tr retrnsmt uid timeout inode; local_address is the
 * address and the port in hex.
 */
function socketsOn(port: number, protocol: PortProtocol, host: ipaddr.IPv4 | ipaddr.IPv6 | null, proc: string): Map<string, number> {
  const found = new Map<string, number>();
  for (const table of [protocol, `${protocol}6`]) {
    let text: string;
    try {
      text = readFileSync(`${proc}/net/${table}`, 'utf8');
    } catch {
      continue; // no IPv6, or not Linux
    }
    for (const line of text.split('\n').slice(1)) {
      const cols = line.trim().split(/\s+/);
      if (cols.length < 10) continue;
      const [localAddress, localPort] = cols[1]!.split(':');
      if (Number.parseInt(localPort!, 16) !== port || (protocol === 'tcp' && cols[3] !== TCP_LISTEN)) continue;
      if (!clashes(tableAddress(localAddress!), host)) continue;
      if (cols[9] !== '0') found.set(cols[9]!, Number(cols[7]));
    }
  }
  return found;
}

/** The pid of the first process (of those this user may look into) with one of the sockets open. */
function processWith(inodes: Map<string, number>, proc: string): number | null {
  const wanted = new Set([...inodes.keys()].map((inode) => `socket:[${inode}]`));
  for (const entry of readdirSync(proc)) {
    if (!/^\d+$/.test(entry)) continue;
    let fds: string[];
    try {
      fds = readdirSync(`${proc}/${entry}/fd`);
    } catch {
      continue; // another user's process, or gone since
    }
    for (const fd of fds) {
      try {
        if (wanted.has(readlinkSync(`${proc}/${entry}/fd/${fd}`))) return Number(entry);
      } catch {
        // closed since the listing
      }
    }
  }
  return null;
}

/**
 * The command line of a process of this user; '' for another user's (a service run as root sees
 * every process: another user's arguments may hold a secret and do not go into our log).
 */
function commandOf(pid: number, proc: string): string {
  try {
    if (statSync(`${proc}/${pid}`).uid !== process.getuid?.()) return '';
    const command = readFileSync(`${proc}/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return command.length > MAX_COMMAND ? `${command.slice(0, MAX_COMMAND - 1)}…` : command;
  } catch {
    return '';
  }
}

/**
 * Who holds `port` (a listening TCP socket, or a bound UDP one, at an address that clashes with
 * `host` when given), read from /proc: the process
 * when its file descriptors may be read, the socket's uid when not, null when the tables say
 * nothing (not Linux, or the port is free by now). Synchronous: it runs once, on a failed start.
 */
export function findPortHolder(port: number, protocols: readonly PortProtocol[], options: { host?: string; proc?: string } = {}): PortHolder | null {
  const proc = options.proc ?? '/proc';
  const host = parsedHost(options.host);
  for (const protocol of protocols) {
    const inodes = socketsOn(port, protocol, host, proc);
    if (inodes.size === 0) continue;
    const pid = processWith(inodes, proc);
    if (pid !== null) return { pid, command: commandOf(pid, proc) };
    return { uid: inodes.values().next().value! };
  }
  return null;
}

/** `port 3000 is taken by pid 1234 (node bin/parley.js serve)`, or where that cannot be read, how to find out. */
export function describeTakenPort(port: number, protocols: readonly PortProtocol[], options: { host?: string; proc?: string } = {}): string {
  let holder: PortHolder | null = null;
  try {
    holder = findPortHolder(port, protocols, options);
  } catch {
    // /proc unreadable: fall through to the command that finds out
  }
  if (holder && 'pid' in holder) return `port ${port} is taken by pid ${holder.pid}${holder.command ? ` (${holder.command})` : ''}`;
  const flags = protocols.map((p) => (p === 'tcp' ? 't' : 'u')).join('');
  const find = `ss -l${flags}np 'sport = :${port}'`;
  if (holder) return `port ${port} is taken by a process of uid ${holder.uid} that this user cannot see (\`sudo ${find}\` names it)`;
  return `port ${port} is taken (\`${find}\` names the process that holds it)`;
}
