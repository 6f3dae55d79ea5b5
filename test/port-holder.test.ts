import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createSocket } from 'node:dgram';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describeTakenPort, findPortHolder } from '../src/port-holder.ts';


describe('the holder of a taken port, from /proc', { timeout: 30_000 }, () => {
  it('a TCP listener of this process is named by its pid and command', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const holder = findPortHolder(port, ['tcp']);
      assert.ok(holder && 'pid' in holder, `found ${JSON.stringify(holder)}`);
      assert.equal(holder.pid, process.pid);
      assert.match(holder.command, /node/);
      assert.match(describeTakenPort(port, ['tcp']), new RegExp(`^port ${port} is taken by pid ${process.pid} \\(.*node.*\\)$`));
      // A UDP search does not take a TCP listener for its holder, nor one for another address.
      assert.equal(findPortHolder(port, ['udp']), null);
      assert.deepEqual(findPortHolder(port, ['tcp'], { host: '127.0.0.1' }), holder);
      assert.deepEqual(findPortHolder(port, ['tcp'], { host: '0.0.0.0' }), holder);
      assert.equal(findPortHolder(port, ['tcp'], { host: '127.0.0.2' }), null);
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('a bound UDP socket of this process is named too', async () => {
    const socket = createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    try {
      const { port } = socket.address();
      assert.match(describeTakenPort(port, ['udp', 'tcp']), new RegExp(`^port ${port} is taken by pid ${process.pid} `));
    } finally {
      await new Promise<void>((resolve) => socket.close(resolve));
    }
  });

  it('a socket whose process cannot be seen names its uid and the command that finds it', () => {
    // A /proc of our making: the socket is in the table, no process shows it.
    const proc = mkdtempSync(join(tmpdir(), 'parley-proc-'));
    try {
      mkdirSync(join(proc, 'net'));
      const header = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
      writeFileSync(join(proc, 'net', 'tcp'), `${header}   0: 0100007F:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000   104        0 4242 1 0 100 0 0 10 0\n`);
      mkdirSync(join(proc, '77', 'fd'), { recursive: true });
      symlinkSync('socket:[999]', join(proc, '77', 'fd', '3'));
      assert.deepEqual(findPortHolder(3000, ['tcp'], { proc }), { uid: 104 });
      assert.equal(describeTakenPort(3000, ['tcp'], { proc }), 'port 3000 is taken by a process of uid 104 that this user cannot see (`sudo ss -ltnp \'sport = :3000\'` names it)');
      // The process that holds the socket, when it shows.
      symlinkSync('socket:[4242]', join(proc, '77', 'fd', '4'));
      writeFileSync(join(proc, '77', 'cmdline'), 'node\0bin/parley.js\0serve\0');
      assert.equal(describeTakenPort(3000, ['tcp'], { proc }), 'port 3000 is taken by pid 77 (node bin/parley.js serve)');
      // A port nobody listens on (or a connected socket's): the command that finds out.
      assert.equal(describeTakenPort(3001, ['tcp'], { proc }), 'port 3001 is taken (`ss -ltnp \'sport = :3001\'` names the process that holds it)');
    } finally {
      rmSync(proc, { recursive: true, force: true });
    }
  });

  it('of listeners on the same port, the one at an address that clashes with the host', () => {
    const proc = mkdtempSync(join(tmpdir(), 'parley-proc-'));
    try {
      mkdirSync(join(proc, 'net'));
      const header = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
      const row = (address: string, inode: number) => `   0: ${address}:0BB8 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 ${inode} 1 0 100 0 0 10 0\n`;
      // 127.0.0.3 first, then 127.0.0.1 (the words in little-endian hex); in tcp6, :: (all addresses).
      writeFileSync(join(proc, 'net', 'tcp'), header + row('0300007F', 5555) + row('0100007F', 4242));
      writeFileSync(join(proc, 'net', 'tcp6'), header + row('00000000000000000000000000000000', 6666));
      for (const [pid, inode, command] of [[77, 4242, 'one'], [88, 5555, 'three'], [99, 6666, 'any']] as const) {
        mkdirSync(join(proc, String(pid), 'fd'), { recursive: true });
        symlinkSync(`socket:[${inode}]`, join(proc, String(pid), 'fd', '3'));
        writeFileSync(join(proc, String(pid), 'cmdline'), `${command}\0`);
      }
      assert.equal(describeTakenPort(3000, ['tcp'], { proc, host: '127.0.0.1' }), 'port 3000 is taken by pid 77 (one)');
      assert.equal(describeTakenPort(3000, ['tcp'], { proc, host: '127.0.0.3' }), 'port 3000 is taken by pid 88 (three)');
      assert.equal(describeTakenPort(3000, ['tcp'], { proc, host: '127.0.0.9' }), 'port 3000 is taken by pid 99 (any)');
    } finally {
      rmSync(proc, { recursive: true, force: true });
    }
  });

  it('no /proc at all (not Linux): the command that finds out', () => {
    assert.equal(describeTakenPort(5060, ['udp', 'tcp'], { proc: '/nonexistent-proc' }), 'port 5060 is taken (`ss -lutnp \'sport = :5060\'` names the process that holds it)');
  });
});
