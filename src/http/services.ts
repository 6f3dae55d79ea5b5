import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import { createSecretBox, type SecretBox } from '../crypto/secret-box.ts';
import { parseAllowList, type AllowList } from '../egress/policy.ts';
import type { Config } from '../config.ts';

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    secrets: SecretBox;
    egressAllow: AllowList;
  }
}

/** What the feature modules share besides the database: config, the secret box and the egress allow list. */
export const servicesPlugin = fp(
  async (app: FastifyInstance, opts: { config: Config }) => {
    app.decorate('config', opts.config);
    app.decorate('secrets', createSecretBox(opts.config.secretKey));
    app.decorate('egressAllow', parseAllowList(opts.config.egressAllow));
  },
  { name: 'parley-services' },
);
