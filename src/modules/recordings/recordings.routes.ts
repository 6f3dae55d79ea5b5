import { rm } from 'node:fs/promises';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { Envelope, envelope, responses } from '../../http/envelope.ts';
import { AppError, conflict, notFound } from '../../http/errors.ts';
import { CallParams } from '../calls/calls.schemas.ts';
import { wavSize, wavStream } from './recordings.read.ts';
import type { RecordingStorage } from './storage.ts';

const tags = ['Calls'];
const Wav = Type.String({ format: 'binary', title: 'CallRecordingWav', description: 'A 16-bit PCM WAV, stereo: the caller left, the assistant right' });

/** A single `bytes=` range of a resource of `size` bytes: [start, end), 'unsatisfiable', or null to send it whole (none, several, or malformed). */
export function byteRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  const m = header ? /^bytes=(\d*)-(\d*)$/.exec(header.trim()) : null;
  if (!m || (m[1] === '' && m[2] === '')) return null;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    return suffix === 0 ? 'unsatisfiable' : { start: Math.max(0, size - suffix), end: size };
  }
  const start = Number(m[1]);
  const end = m[2] === '' ? size : Math.min(size, Number(m[2]) + 1);
  if (m[2] !== '' && Number(m[2]) < start) return null;
  return start >= size ? 'unsatisfiable' : { start, end };
}

/**
 * A call's recording: GET streams it as a WAV (Range answered with 206), decrypting only the
 * chunks asked for; DELETE removes it from the folder or bucket (and its spool) and keeps the
 * status `deleted`.
 */
export const recordingRoutes: FastifyPluginAsyncTypebox<{ storage: RecordingStorage }> = async (app, { storage }) => {
  const { kysely } = app.ctx.db;
  const find = (organizationId: string, callId: string) =>
    kysely.selectFrom('call_recordings').selectAll().where('organization_id', '=', organizationId).where('call_id', '=', callId).executeTakeFirst();

  app.get('/calls/:callId/recording', {
    config: { auth: { scope: 'organization', permission: 'calls:read' } },
    schema: {
      tags, operationId: 'getCallRecording', summary: "Download a call's recording (audio/wav; Range supported)",
      description: 'A stereo 16-bit PCM WAV at the call\'s own rate: the caller on the left channel, the assistant on the right, time-aligned ' +
        'with the transcript\'s startMs and endMs. 409 while the call runs or the recording is being stored. See docs/calls.md, "Recordings".',
      params: CallParams,
      response: {
        ...responses(200, Type.Null(), [409, 416]),
        200: { description: 'The whole recording', content: { 'audio/wav': { schema: Wav } } },
        206: { description: 'The part the Range asked for (Content-Range says which)', content: { 'audio/wav': { schema: Wav } } },
      },
    },
  }, async (request, reply) => {
    const row = await find(request.params.organizationId, request.params.callId);
    if (!row || row.status === 'deleted' || row.status === 'failed') throw notFound('Recording');
    if (row.status !== 'ready') throw conflict(`The recording is not ready yet (${row.status}); try again once recording_ready has been sent`);
    const size = wavSize(row);
    const range = byteRange(request.headers.range, size);
    reply.header('accept-ranges', 'bytes').header('cache-control', 'private, no-store')
      .header('content-disposition', `inline; filename="call-${row.call_id}.wav"`);
    if (range === 'unsatisfiable') {
      reply.header('content-range', `bytes */${size}`);
      throw new AppError(416, `The recording is ${size} bytes long`, [{ path: '(headers).range', message: `must start before byte ${size}` }]);
    }
    const { start, end } = range ?? { start: 0, end: size };
    if (range) reply.code(206).header('content-range', `bytes ${start}-${end - 1}/${size}`);
    return reply.type('audio/wav').header('content-length', end - start).send(wavStream(storage.objects, app.ctx.secrets, row, start, end) as never); // a stream: the schema describes it, nothing serialises it
  });

  app.delete('/calls/:callId/recording', {
    config: { auth: { scope: 'organization', permission: 'calls:write' } },
    schema: {
      tags, operationId: 'deleteCallRecording', summary: "Delete a call's recording, everywhere it is kept",
      description: 'Removes the file or object (and the spool of a call still running, which is then not kept); the call shows the recording as deleted.',
      params: CallParams, response: responses(200, Envelope(Type.Null())),
    },
  }, async (request) => {
    const row = await find(request.params.organizationId, request.params.callId);
    if (!row) throw notFound('Recording');
    if (row.status !== 'deleted') {
      const at = app.ctx.clock.now().toISOString();
      await kysely.updateTable('call_recordings').set({ status: 'deleted', deleted_at: at, updated_at: at })
        .where('call_id', '=', row.call_id).where('status', '=', row.status).execute();
      // A live call's spool is removed when it ends; an upload under way removes what it stored.
      if (row.status === 'ready' || row.status === 'uploading') await storage.objects.remove(row.object_key);
      if (row.status !== 'recording' && row.spool_path) await rm(row.spool_path, { force: true });
    }
    return envelope(request, null);
  });
};
