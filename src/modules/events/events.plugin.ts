import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../../clock.ts';
import { createDeliverer, type Deliverer } from './deliverer.ts';
import { deliveryRoutes } from './deliveries.routes.ts';

declare module 'fastify' {
  interface FastifyInstance {
    deliverer: Deliverer;
  }
}

export interface EventsPluginOptions {
  clock: Clock;
  /** Poll the outbox with the app (tests drive `app.deliverer.tick()` instead). */
  run: boolean;
}

/** Call event hooks: the outbox deliverer, started and stopped with the app, and the delivery log API. */
export const eventsPlugin = fp(
  async (app: FastifyInstance, opts: EventsPluginOptions) => {
    const deliverer = createDeliverer(app.config, app.db, app.log, { clock: opts.clock });
    app.decorate('deliverer', deliverer);
    await app.register(deliveryRoutes, { clock: opts.clock });
    if (opts.run) app.addHook('onReady', async () => deliverer.start());
    app.addHook('preClose', async () => deliverer.stop());
  },
  { name: 'parley-events', dependencies: ['parley-db', 'parley-services'] },
);
