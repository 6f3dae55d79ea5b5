import { Type, type Static } from 'typebox';
import { DateTime, Uuid } from '../../http/schemas.ts';
import { Assistant } from './assistants.schemas.ts';

/** Versions kept per assistant or agent: older ones go as new ones come, unless a task pins them. */
export const MAX_VERSIONS = 100;

export const VersionNumber = Type.Integer({ minimum: 1, maximum: 2_147_483_647, description: 'A version number: 1, 2, 3… per assistant or agent' });

export const VersionToken = Type.Object(
  { id: Uuid, name: Type.String() },
  { title: 'VersionToken', description: 'The API token that made the version (never its secret)' },
);

export const AssistantVersionSummary = Type.Object(
  {
    number: VersionNumber,
    createdAt: DateTime,
    token: Type.Union([VersionToken, Type.Null()], {
      description: 'The API token that made it; null for the platform admin token and for the version recorded when versions began',
    }),
    summary: Type.String({ description: 'One line: "created", "systemPrompt, extensions changed", "restored version 3: systemPrompt changed"' }),
    changes: Type.Array(Type.String(), { description: 'The fields of the read shape this version changed (empty for the first one)' }),
    restoredFrom: Type.Union([VersionNumber, Type.Null()], { description: 'A restore: the version it brought back' }),
  },
  { title: 'AssistantVersionSummary' },
);
export type AssistantVersionSummary = Static<typeof AssistantVersionSummary>;

export const AssistantVersion = Type.Object(
  {
    ...AssistantVersionSummary.properties,
    configuration: Assistant,
  },
  {
    title: 'AssistantVersion',
    description: 'A version and the whole configuration as it was (write-only values masked as in the read shape; its updatedAt is when the version was made)',
  },
);
export type AssistantVersion = Static<typeof AssistantVersion>;
