// A throwaway Kamailio registrar or proxy on loopback for SIP integration tests: the lab's
// Kamailio runner (src/lab/kamailio.ts) with the tests' templates and a fresh password.
import { PROXY_CONFIG, startKamailio as runKamailio, type Kamailio as Running } from '../../src/lab/kamailio.ts';

export { freeTcpPort, freeUdpPort } from '../../src/lab/ports.ts';

const TEMPLATES = {
  registrar: new URL('../fixtures/kamailio/kamailio.cfg.template', import.meta.url),
  proxy: PROXY_CONFIG,
};

export interface KamailioOptions {
  /** Digest algorithm Kamailio challenges with. */
  algorithm?: 'MD5' | 'SHA-256';
  /** 'registrar' (default): REGISTER only. 'proxy': registrar plus record-routing proxy for calls. */
  template?: 'registrar' | 'proxy';
  /** proxy: the number delivered to the registration of `username`. */
  did?: string;
  /** proxy: INVITEs whose From user matches this regular expression must authenticate (407). */
  authFrom?: string;
  /** proxy: REFERs whose Refer-To matches this regular expression are answered 501, not relayed. */
  refuseReferTo?: string;
  /**
   * Another config to run (docs/kamailio/dispatcher.cfg): its {{NAME}} placeholders take the
   * usual values, DIR (the run folder) and `values`. `files` are written into DIR first,
   * templated the same way (a dispatcher list, say).
   */
  config?: URL;
  values?: Record<string, string>;
  files?: Record<string, URL>;
}

export interface Kamailio extends Running {
  username: string;
  password: string;
}

export async function startKamailio(options: KamailioOptions = {}): Promise<Kamailio> {
  const username = 'alice';
  const password = `pw-${Math.random().toString(36).slice(2, 10)}`;
  const running = await runKamailio({
    config: options.config ?? TEMPLATES[options.template ?? 'registrar'],
    files: options.files,
    values: {
      USERNAME: username,
      PASSWORD: password,
      ALGORITHM: options.algorithm ?? 'MD5',
      DID: options.did ?? '+15550199',
      AUTH_FROM: options.authFrom ?? '^[+]1555000',
      REFUSE_REFER_TO: options.refuseReferTo ?? '^never$',
      ...options.values,
    },
  });
  return { ...running, username, password };
}
