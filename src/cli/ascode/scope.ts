import { Command } from 'commander';
import { ConfigError, loadClientConfig } from '../../config.ts';
import { createApiClient } from '../api-client.ts';
import { id } from '../arguments.ts';
import type { CliIo } from '../io.ts';
import type { Org } from './kinds.ts';

export interface ScopeOptions {
  url?: string;
  token?: string;
  vendor?: string;
  organization?: string;
}

/** The options pull, diff and push share: where the service is, the token, and the organization the folder mirrors. */
export function scopedCommand(name: string, permission: string): Command {
  return new Command(name)
    .argument('<dir>', 'the folder of YAML files (strategies/, sip-credentials/, sip-numbers/, assistants/, agents/)')
    .option('--url <url>', 'the Parley service (env: PARLEY_URL; default http://127.0.0.1:$PORT, else 8080)')
    .option('--token <token>', `an API token of the organization with ${permission} (env: PARLEY_TOKEN)`)
    .option('--vendor <id>', 'the vendor of the organization (env: PARLEY_VENDOR)', id)
    .option('--organization <id>', 'the organization (env: PARLEY_ORGANIZATION)', id);
}

export interface Scope {
  org: Org;
  vendor: string;
  organization: string;
}

export function openScope(io: CliIo, options: ScopeOptions, command: string): Scope {
  const client = loadClientConfig(io.env);
  const token = options.token ?? client.token;
  if (!token) throw new ConfigError(`parley ${command} needs an API token of the organization: set PARLEY_TOKEN or pass --token (parley setup makes one)`);
  const vendor = options.vendor ?? client.vendor;
  const organization = options.organization ?? client.organization;
  if (!vendor || !organization) throw new ConfigError(`parley ${command} needs the organization: set PARLEY_VENDOR and PARLEY_ORGANIZATION (parley setup prints them), or pass --vendor and --organization`);
  const api = createApiClient((options.url ?? client.url).replace(/\/+$/, ''), token);
  return { org: api.parley.organization(vendor, organization), vendor, organization };
}
