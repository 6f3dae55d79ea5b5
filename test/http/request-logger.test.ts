import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { describe, it } from 'node:test';
import Fastify from 'fastify';
import pino from 'pino';
import { loggerOptions } from '../../src/logging.ts';
import { RequestLogger, requestLogger } from '../../src/http/request-logger.ts';

function capture(level: string) {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({ write: (chunk: Buffer, _enc, done) => { lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>); done(); } });
  return { log: pino(loggerOptions(level), stream), lines };
}

describe('the request logger', () => {
  it('writes what pino\'s child writes: the request id bound, secrets redacted, Fastify\'s own lines', async () => {
    const { log, lines } = capture('info');
    const app = Fastify({ loggerInstance: log, childLoggerFactory: requestLogger, genReqId: () => 'trace-1' });
    app.get('/x', async (request) => {
      request.log.warn({ body: { token: 'sk-secret-value' } }, 'careful');
      request.log.child({ step: 'inner' }).info('nested');
      return { ok: true };
    });
    const res = await app.inject({ method: 'GET', url: '/x', headers: { authorization: 'Bearer sk-secret-value' } });
    assert.equal(res.statusCode, 200);
    await app.close();
    const ofRequest = lines.filter((l) => l.reqId === 'trace-1');
    assert.deepEqual(ofRequest.map((l) => l.msg), ['incoming request', 'careful', 'nested', 'request completed']);
    assert.deepEqual(ofRequest[1]?.body, { token: '[Redacted]' });
    assert.equal(ofRequest[2]?.step, 'inner');
    assert.ok(!JSON.stringify(lines).includes('sk-secret-value'));
  });

  it('builds no child until a line is written at an enabled level', () => {
    const { log, lines } = capture('warn');
    let children = 0;
    const counting = Object.assign(Object.create(log) as typeof log, {
      child: (...args: Parameters<typeof log.child>) => (children++, log.child(...args)),
    });
    const logger = new RequestLogger(counting, { reqId: 'r-2' }, {});
    logger.info('not written');
    logger.debug({ a: 1 }, 'not written');
    assert.equal(children, 0);
    assert.equal(logger.level, 'warn');
    logger.error({ password: 'hunter2' }, 'written');
    logger.warn('again');
    assert.equal(children, 1);
    assert.deepEqual(lines.map((l) => [l.reqId, l.msg, l.password]), [['r-2', 'written', '[Redacted]'], ['r-2', 'again', undefined]]);
  });

  it('a route with its own log level gets pino\'s child at once', () => {
    const { log } = capture('info');
    const child = requestLogger(log, { reqId: 'r-3' }, { level: 'error' });
    assert.ok(!(child instanceof RequestLogger));
    assert.equal(child.level, 'error');
  });
});
