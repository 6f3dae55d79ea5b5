import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Db } from './database.ts';

declare module 'fastify' {
  interface FastifyInstance {
    db: Db;
  }
}

/** Hands the opened database to every route and closes it with the app. */
export const dbPlugin = fp(
  async (app: FastifyInstance, opts: { db: Db; closeOnShutdown: boolean }) => {
    app.decorate('db', opts.db);
    if (opts.closeOnShutdown) app.addHook('onClose', () => opts.db.close());
  },
  { name: 'parley-db' },
);
