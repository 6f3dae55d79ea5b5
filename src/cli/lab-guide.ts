import type { Baresip, BaresipEvent } from '../lab/baresip.ts';
import type { Kamailio } from '../lab/kamailio.ts';
import { LAB_CREDENTIAL_NAME, type Provisioned } from './lab-trunk.ts';

interface GuideFacts {
  kamailio: Kamailio;
  phone: Baresip;
  provisioned: Provisioned;
  organization: string;
  /** Why the trunk's port is not the one asked for, or ''. */
  note: string;
  options: { phone: string; number: string; rtpPorts: string; autoAnswer?: boolean };
}

/** What is running, what was created, and the exact commands of the next steps. */
export function labGuide({ kamailio, phone, provisioned, organization, note, options }: GuideFacts): string {
  const { numberId, credentialId, created } = provisioned;
  const agentBody = `{"name":"Lab caller","systemPromptGreeting":"Hello from Parley! This is a test call.","telephoneNumberId":"${numberId}"}`;
  const answer = options.autoAnswer ? 'answers at once (--auto-answer)' : 'answers when you type a';
  return [
    'Parley lab is up (Ctrl-C stops it):',
    `  trunk   Kamailio on ${kamailio.host}:${kamailio.udpPort}, UDP and TCP${note}`,
    `  phone   baresip on ${kamailio.host}:${phone.sipPort}, registered at the trunk as ${options.phone}; it ${answer}; RTP ports ${options.rtpPorts}`,
    `  Parley  SIP credentials "${LAB_CREDENTIAL_NAME}" (${credentialId}, ${created.credential ? 'created' : 'updated'}) registering at the trunk,`,
    `          and the number ${options.number} (${numberId}, ${created.number ? 'created' : 'updated'}) on them, in organization ${organization}`,
    '',
    `Make the phone ring: an agent with the number ${options.number} and a task that calls ${options.phone}. In another`,
    'terminal, with the api and pick functions of docs/getting-started.md (step 3):',
    '',
    `  AGENT=$(api POST /agents '${agentBody}' | pick id)`,
    `  TASK=$(api POST "/agents/$AGENT/tasks" '{"targetNumber":"${options.phone}"}' | pick id)`,
    `  api POST "/agents/$AGENT/tasks/$TASK/execute" '{}'; echo`,
    '',
    options.autoAnswer
      ? 'The phone rings here and answers; type h and Enter to hang up.'
      : 'The phone rings here: type a and Enter to answer, h and Enter to hang up.',
    'The call record then: api GET "/calls?agentId=$AGENT"',
    `Or call Parley from the phone: type d ${options.number} and Enter (the number's assistant answers, or its agent`,
    'when no assistant has it). A voice call needs speech to text (docs/getting-started.md, "Voice"):',
    'without one the call is answered and ends at once, its record saying what is missing.',
    `What the phone heard and said is recorded in ${phone.dir} (dump-*-dec.wav, dump-*-enc.wav) until the lab stops.`,
    '',
    '',
  ].join('\n');
}

/** One line for what the phone saw, or null for events nobody needs to read (registrations, RTCP). */
export function phoneLine(event: BaresipEvent, autoAnswer: boolean, dir: string): string | null {
  const peer = event.peeruri ?? 'unknown';
  switch (event.type) {
    case 'CALL_INCOMING':
      return autoAnswer ? `phone: ringing, a call from ${peer}; answering` : `phone: ringing, a call from ${peer}. Type a and Enter to answer, h to refuse.`;
    case 'CALL_OUTGOING':
      return `phone: calling ${peer}`;
    case 'CALL_ESTABLISHED':
      return `phone: in a call with ${peer}. Type h and Enter to hang up.`;
    case 'CALL_CLOSED':
      return `phone: call ended${event.param ? ` (${event.param})` : ''}; what it heard is in ${dir}`;
    default:
      return null;
  }
}
