import type { Migration } from '../migrate.ts';
import { m001Tenancy } from './001_tenancy.ts';
import { m002Assistants } from './002_assistants.ts';
import { m003Sip } from './003_sip.ts';
import { m004Tasks } from './004_tasks.ts';
import { m005Calls } from './005_calls.ts';
import { m006Events } from './006_events.ts';
import { m007RateLimits } from './007_rate_limits.ts';
import { m008Runner } from './008_runner.ts';
import { m009NameSearch } from './009_name_search.ts';
import { m010ProviderCredentials } from './010_provider_credentials.ts';
import { m011VoiceCalls } from './011_voice_calls.ts';
import { m012Analytics } from './012_analytics.ts';
import { m013SipCalls } from './013_sip_calls.ts';
import { m014SipRegistrations } from './014_sip_registrations.ts';
import { m015Hardening } from './015_hardening.ts';
import { m016Versions } from './016_versions.ts';
import { m017AnsweredBy } from './017_answered_by.ts';
import { m018TurnTaking } from './018_turn_taking.ts';
import { m019RecordingsAnalysis } from './019_recordings_analysis.ts';

/**
 * Applied in this order; a released migration is never edited, only followed by a new one.
 * The runner applies every migration whose name it has not recorded, so 009 (kept free on main
 * for the console's name search) still runs on a database that already has 010 and 011.
 */
export const migrations: readonly Migration[] = [
  m001Tenancy, m002Assistants, m003Sip, m004Tasks, m005Calls, m006Events, m007RateLimits, m008Runner,
  m009NameSearch, m010ProviderCredentials, m011VoiceCalls, m012Analytics, m013SipCalls, m014SipRegistrations,
  m015Hardening, m016Versions, m017AnsweredBy, m018TurnTaking, m019RecordingsAnalysis,
];
