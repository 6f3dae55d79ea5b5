import dgram from 'node:dgram';
import net from 'node:net';

/** A loopback TCP port the kernel says is free now (it may be taken before it is bound: callers retry). */
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

/** Whether `port` can be bound on loopback for UDP and TCP alike (a SIP listener needs both). */
export async function portIsFree(port: number): Promise<boolean> {
  const udp = dgram.createSocket('udp4');
  const tcp = net.createServer();
  try {
    await new Promise<void>((resolve, reject) => udp.once('error', reject).bind(port, '127.0.0.1', resolve));
    await new Promise<void>((resolve, reject) => tcp.once('error', reject).listen(port, '127.0.0.1', resolve));
    return true;
  } catch {
    return false;
  } finally {
    try {
      udp.close();
    } catch {
      // never bound
    }
    if (tcp.listening) await new Promise<void>((resolve) => tcp.close(() => resolve()));
  }
}
