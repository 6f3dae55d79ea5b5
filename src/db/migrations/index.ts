import type { Migration } from '../migrate.ts';
import { m001Tenancy } from './001_tenancy.ts';

/** Applied in this order; a released migration is never edited, only followed by a new one. */
export const migrations: readonly Migration[] = [m001Tenancy];
