import type { Migration } from '../migrate.ts';
import { m001Tenancy } from './001_tenancy.ts';
import { m002Assistants } from './002_assistants.ts';
import { m003Sip } from './003_sip.ts';
import { m004Tasks } from './004_tasks.ts';

/** Applied in this order; a released migration is never edited, only followed by a new one. */
export const migrations: readonly Migration[] = [m001Tenancy, m002Assistants, m003Sip, m004Tasks];
