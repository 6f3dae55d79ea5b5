/**
 * An S3-compatible server on loopback for tests: s3rver (npm), which serves the S3 API from a
 * folder but does not check SigV4 signatures (its authentication middleware says "Signature
 * version 4 calculation is unimplemented"), behind a proxy written here that does: every request
 * must carry a valid AWS4-HMAC-SHA256 Authorization for the test's keys and region, dated within
 * 15 minutes, and a body whose SHA-256 is the x-amz-content-sha256 it signed. The proxy is our
 * own reading of the SigV4 specification, independent of the client Parley uses (aws4), so a
 * signing mistake there fails here. It can also hold uploads half-read (a process killed mid-upload).
 */
import { createHash, createHmac } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

/** s3rver's built-in account: the access key it knows, and the secret our proxy checks with. */
export const S3_KEYS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' } as const;
export const S3_REGION = 'eu-test-1';
export const S3_BUCKET = 'parley-recordings';

export interface TestS3 {
  /** The proxy: what Parley is pointed at. */
  url: string;
  /** PARLEY_RECORDINGS_S3_* for it. */
  env: Record<string, string>;
  /** Requests whose signature checked out, and those refused (with why). */
  verified: { method: string; path: string }[];
  refused: { method: string; path: string; reason: string }[];
  /** While true, PUT bodies are read up to half and then held: the upload hangs mid-way. */
  holdUploads: boolean;
  /** Uploads being held right now. */
  held(): number;
  /** An object's bytes as stored, or null. */
  object(key: string): Promise<Buffer | null>;
  close(): Promise<void>;
}

const sha256 = (data: Buffer | string) => createHash('sha256').update(data).digest('hex');
const hmac = (key: Buffer | string, data: string) => createHmac('sha256', key).update(data).digest();

/** Why a request's SigV4 signature does not hold, or null when it does. */
export function sigV4Problem(method: string, url: string, headers: IncomingMessage['headers'], body: Buffer, now = Date.now()): string | null {
  const auth = headers.authorization;
  const m = auth ? /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/s3\/aws4_request, ?SignedHeaders=([a-z0-9;-]+), ?Signature=([0-9a-f]{64})$/.exec(auth) : null;
  if (!m) return 'no AWS4-HMAC-SHA256 Authorization header';
  const [, keyId, day, region, signedHeaders, signature] = m as unknown as string[];
  if (keyId !== S3_KEYS.accessKeyId) return `unknown access key ${keyId}`;
  if (region !== S3_REGION) return `signed for region ${region}`;
  const amzDate = String(headers['x-amz-date'] ?? '');
  const when = Date.parse(amzDate.replace(/^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/, '$1-$2-$3T$4:$5:$6Z'));
  if (!Number.isFinite(when) || Math.abs(now - when) > 15 * 60_000 || !amzDate.startsWith(day!)) return `bad x-amz-date ${amzDate}`;
  const payloadHash = String(headers['x-amz-content-sha256'] ?? '');
  if (payloadHash !== sha256(body)) return 'x-amz-content-sha256 is not the SHA-256 of the body';
  const names = signedHeaders!.split(';');
  for (const required of ['host', 'x-amz-date', 'x-amz-content-sha256']) if (!names.includes(required)) return `${required} is not signed`;
  const [path = '/', query = ''] = url.split('?');
  const canonicalQuery = query.split('&').filter(Boolean).map((p) => p.split('=').map((x) => encodeURIComponent(decodeURIComponent(x))).join('=')).sort().join('&');
  const canonicalHeaders = names.map((n) => `${n}:${String(headers[n] ?? '').trim().replace(/\s+/g, ' ')}\n`).join('');
  const canonical = [method, path, canonicalQuery, canonicalHeaders, signedHeaders, payloadHash].join('\n');
  const scope = `${day}/${region}/s3/aws4_request`;
  const toSign = ['AWS4-HMAC-SHA256', amzDate, scope, sha256(canonical)].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${S3_KEYS.secretAccessKey}`, day!), region), 's3'), 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex') === signature ? null : 'the signature does not match';
}

export async function startTestS3(): Promise<TestS3> {
  const directory = mkdtempSync(join(tmpdir(), 'parley-s3-'));
  const backend = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory, configureBuckets: [{ name: S3_BUCKET }], vhostBuckets: false });
  const { port: backendPort } = (await backend.run()) as AddressInfo;
  const holding = new Set<IncomingMessage>();
  const state = { holdUploads: false };
  const verified: TestS3['verified'] = [];
  const refused: TestS3['refused'] = [];

  const forward = (req: IncomingMessage, res: ServerResponse, body: Buffer) => {
    const upstream = request({ host: '127.0.0.1', port: backendPort, method: req.method, path: req.url, headers: { ...req.headers, host: `127.0.0.1:${backendPort}` } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    upstream.end(body);
  };

  const proxy = createServer((req, res) => {
    const parts: Buffer[] = [];
    let read = 0;
    const expected = Number(req.headers['content-length'] ?? 0);
    req.on('data', (chunk: Buffer) => {
      parts.push(chunk);
      read += chunk.length;
      if (state.holdUploads && req.method === 'PUT' && read >= expected / 2) {
        req.pause();
        holding.add(req);
      }
    });
    req.on('close', () => holding.delete(req));
    req.on('end', () => {
      const body = Buffer.concat(parts);
      const problem = sigV4Problem(req.method ?? 'GET', req.url ?? '/', req.headers, body);
      const entry = { method: req.method ?? '', path: req.url ?? '' };
      if (problem) {
        refused.push({ ...entry, reason: problem });
        return res.writeHead(403, { 'content-type': 'application/xml' }).end(`<Error><Code>SignatureDoesNotMatch</Code><Message>${problem}</Message></Error>`);
      }
      verified.push(entry);
      forward(req, res, body);
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  const s3: TestS3 = {
    url,
    env: {
      PARLEY_RECORDINGS_S3_URL: url, PARLEY_RECORDINGS_S3_BUCKET: S3_BUCKET, PARLEY_RECORDINGS_S3_REGION: S3_REGION,
      PARLEY_RECORDINGS_S3_ACCESS_KEY_ID: S3_KEYS.accessKeyId, PARLEY_RECORDINGS_S3_SECRET_ACCESS_KEY: S3_KEYS.secretAccessKey,
    },
    verified,
    refused,
    get holdUploads() {
      return state.holdUploads;
    },
    set holdUploads(value: boolean) {
      state.holdUploads = value;
      if (!value) for (const req of holding) req.resume();
    },
    held: () => holding.size,
    async object(key) {
      return new Promise((resolve) => {
        request({ host: '127.0.0.1', port: backendPort, path: `/${S3_BUCKET}/${key}` }, (res) => {
          const parts: Buffer[] = [];
          res.on('data', (c: Buffer) => parts.push(c));
          res.on('end', () => resolve(res.statusCode === 200 ? Buffer.concat(parts) : null));
        }).end();
      });
    },
    async close() {
      for (const req of holding) req.destroy();
      proxy.closeAllConnections();
      await new Promise((resolve) => proxy.close(resolve));
      await backend.close();
      rmSync(directory, { recursive: true, force: true });
    },
  };
  return s3;
}
