import type { Migration } from '../migrate.ts';
import { m001Tenancy } from './001_tenancy.ts';
import { m002Assistants } from './002_assistants.ts';

/** Applied in this order; a released migration is never edited, only followed by a new one. */
export const migrations: readonly Migration[] = [m001Tenancy, m002Assistants];
