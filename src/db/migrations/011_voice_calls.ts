import type { Migration } from '../migrate.ts';
import { types } from '../columns.ts';

/** A voice call remembers the audio format its client asked for (null: a text call), and the providers it used. */
export const m011VoiceCalls: Migration = {
  name: '011_voice_calls',
  async up(db, dialect) {
    await db.schema.alterTable('calls').addColumn('audio', types(dialect).json).execute();
    await db.schema.alterTable('calls').addColumn('providers', types(dialect).json).execute();
  },
};
