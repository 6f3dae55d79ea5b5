import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import aws4 from 'aws4';
import { Agent, request } from 'undici';
import type { ObjectStore } from './storage.ts';

export interface S3Options {
  /** The endpoint, e.g. http://127.0.0.1:9000 or https://s3.eu-west-1.amazonaws.com (a path prefix is kept). */
  url: string;
  bucket: string;
  region: string;
  accessKeyId: string;
  secretAccessKey: string;
}

/** What an S3 endpoint answered when it refused: its status and the `Code` of its XML error. */
export class S3Error extends Error {
  override name = 'S3Error';
  constructor(readonly status: number, code: string | null, operation: string) {
    super(`S3 ${operation} answered HTTP ${status}${code ? ` (${code})` : ''}`);
  }
}

const codeOf = (xml: string) => /<Code>([^<]{1,100})<\/Code>/.exec(xml)?.[1] ?? null;

/**
 * An S3-compatible bucket, path-style (`<endpoint>/<bucket>/<key>`, which self-hosted stores
 * serve without DNS per bucket), every request signed with SigV4 by `aws4`, the upload's
 * payload hash included (read once before the upload streams the file). Only what recordings
 * need: PUT an object from a file, GET a byte range, DELETE. The endpoint is the operator's
 * configuration, like the LLM's: outside the tenants' egress policy.
 */
export function s3Objects(options: S3Options): ObjectStore {
  const endpoint = new URL(options.url);
  const base = endpoint.pathname.replace(/\/+$/, '');
  const credentials = { accessKeyId: options.accessKeyId, secretAccessKey: options.secretAccessKey };
  const dispatcher = new Agent({ connections: 8, headersTimeout: 30_000, bodyTimeout: 60_000 });
  const signed = (method: string, key: string, headers: Record<string, string>) => {
    const path = `${base}/${options.bucket}/${key.split('/').map(encodeURIComponent).join('/')}`;
    const signedRequest = aws4.sign({ host: endpoint.host, path, method, service: 's3', region: options.region, headers }, credentials);
    return { url: `${endpoint.protocol}//${endpoint.host}${path}`, headers: signedRequest.headers as Record<string, string> };
  };
  const fail = async (operation: string, res: Awaited<ReturnType<typeof request>>) => {
    const text = await res.body.text().catch(() => '');
    return new S3Error(res.statusCode, codeOf(text), operation);
  };
  return {
    kind: 's3',
    async put(key, spoolPath, bytes) {
      const hash = await fileSha256(spoolPath);
      const { url, headers } = signed('PUT', key, { 'Content-Length': String(bytes), 'Content-Type': 'application/octet-stream', 'X-Amz-Content-Sha256': hash });
      const res = await request(url, { method: 'PUT', headers, body: createReadStream(spoolPath), dispatcher });
      if (res.statusCode !== 200) throw await fail('PUT', res);
      await res.body.dump();
    },
    async read(key, start, end) {
      const { url, headers } = signed('GET', key, {});
      const res = await request(url, { method: 'GET', headers: { ...headers, range: `bytes=${start}-${end - 1}` }, dispatcher });
      if (res.statusCode !== 206 && res.statusCode !== 200) throw await fail('GET', res);
      const body = Buffer.from(await res.body.arrayBuffer());
      // A store that ignores Range answers the whole object.
      return res.statusCode === 200 ? body.subarray(start, end) : body;
    },
    async remove(key) {
      const { url, headers } = signed('DELETE', key, {});
      const res = await request(url, { method: 'DELETE', headers, dispatcher });
      if (res.statusCode !== 204 && res.statusCode !== 200 && res.statusCode !== 404) throw await fail('DELETE', res);
      await res.body.dump();
    },
    close: () => dispatcher.close(),
  };
}

/** The SHA-256 of a file, hex, read as a stream (an hour's recording is a hundred megabytes). */
async function fileSha256(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}
