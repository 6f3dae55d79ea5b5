import type { CallSourceKind } from '../calls/store.ts';
import type { RegistrationState } from '../sip/registration.ts';
import type { SipTransport } from '../sip/resolve.ts';
import type { Trunk } from '../sip/target.ts';

/** A SIP number with the trunk of its credentials, as an incoming INVITE is matched against it. */
export interface NumberTrunk {
  organizationId: string;
  number: string;
  credentialId: string;
  hostname: string;
  port: number;
  transport: SipTransport;
  /** The credentials' maxAgentTasks: calls they carry at once, both directions. */
  maxCalls: number;
}

/** Who answers a number: an assistant (or an agent, its callee calling back); or why nobody does. */
export type Answerer = { kind: CallSourceKind; id: string } | 'no_number' | 'no_assistant';

/** An agent's telephone number and the trunk its calls go out through (password opened). */
export interface DialRoute {
  number: string;
  credentialId: string;
  trunk: Trunk;
}

/**
 * What telephony reads of the organizations' SIP numbers, credentials and assistants. Declared
 * by the engine, implemented by the SIP feature over the database, handed in by the composition.
 */
export interface TelephonyDirectory {
  /** The SIP numbers among `numbers` (in any organization), oldest first. */
  numberTrunks(numbers: readonly string[]): Promise<NumberTrunk[]>;
  /** Who answers a call to `number` in this organization. */
  answerer(organizationId: string, number: string): Promise<Answerer>;
  /** The agent's number and trunk; null when it has no telephone number with SIP credentials. */
  dialRoute(organizationId: string, agentId: string): Promise<DialRoute | null>;
}

/** A credential that asks to be registered, as the registrations see it. */
export interface WantedRegistration {
  id: string;
  hostname: string;
  /** Changes whenever what the registration is made with changes (host, port, transport, account). */
  fingerprint: string;
  /** The trunk, password opened (only when the registration must start). */
  trunk(): Trunk;
}

/**
 * Where the trunk registrations keep their leases (one process per credential) and the states
 * the credentials' read shape shows. Implemented by the SIP feature.
 */
export interface RegistrationStore {
  /** The credentials with `register` set. */
  wanted(): Promise<WantedRegistration[]>;
  /** Drops the rows of credentials no longer in `keep`, whoever held them. */
  dropStale(keep: readonly string[]): Promise<void>;
  /** Takes or renews this process's lease until `until`; false when another process holds it. */
  lease(id: string, now: Date, until: Date): Promise<boolean>;
  /** Stores a state of this process's registration. */
  write(id: string, state: RegistrationState, now: Date): Promise<void>;
  /** Gives up this process's lease. */
  release(id: string): Promise<void>;
}
