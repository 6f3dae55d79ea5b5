import { createInterface } from 'node:readline/promises';
import { Command, Option } from 'commander';
import { ConfigError, loadClientConfig } from '../config.ts';
import { ROLE_NAMES } from '../modules/tokens/permissions.ts';
import { createApiClient } from './api-client.ts';
import type { CliIo, Outcome } from './io.ts';

interface SetupOptions {
  url?: string;
  adminToken?: string;
  vendorName?: string;
  organizationName?: string;
  tokenName: string;
  role: (typeof ROLE_NAMES)[number];
}

const DEFAULTS = { vendorName: 'My company', organizationName: 'Main' } as const;

/** Names not given as flags: asked for on a terminal (Enter keeps the default), else the defaults. */
async function names(io: CliIo, options: SetupOptions): Promise<{ vendor: string; organization: string }> {
  const given = { vendor: options.vendorName, organization: options.organizationName };
  if ((given.vendor && given.organization) || !io.stdin.isTTY) {
    return { vendor: given.vendor ?? DEFAULTS.vendorName, organization: given.organization ?? DEFAULTS.organizationName };
  }
  const rl = createInterface({ input: io.stdin, output: io.stderr, terminal: true });
  try {
    const ask = async (question: string, fallback: string) => (await rl.question(`${question} [${fallback}]: `)).trim() || fallback;
    return {
      vendor: given.vendor ?? (await ask('Vendor name (your company)', DEFAULTS.vendorName)),
      organization: given.organization ?? (await ask('Organization name (a team or customer)', DEFAULTS.organizationName)),
    };
  } finally {
    rl.close();
  }
}

const quote = (value: string) => `'${value.replace(/'/g, `'\\''`)}'`;

/**
 * `parley setup`: a vendor, an organization in it and a token narrowed to that organization,
 * through the API with the admin token; prints the export lines chat and curl use next (on
 * stdout, so `eval "$(parley setup)"` takes them; the rest goes to stderr).
 */
export function setupCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  return new Command('setup')
    .summary('create a vendor, an organization and a token in one go')
    .description('Create a vendor, an organization in it and an API token narrowed to that organization, through the API of a running parley serve.\nPrints the export lines to use next (PARLEY_URL, PARLEY_TOKEN, PARLEY_VENDOR, PARLEY_ORGANIZATION); names not given are asked for on a terminal.')
    .option('--url <url>', 'the Parley service (env: PARLEY_URL; default http://127.0.0.1:$PORT, else 8080)')
    .option('--admin-token <token>', 'the platform admin token (env: PARLEY_ADMIN_TOKEN)')
    .option('--vendor-name <name>', `the vendor's name (default "${DEFAULTS.vendorName}")`)
    .option('--organization-name <name>', `the organization's name (default "${DEFAULTS.organizationName}")`)
    .option('--token-name <name>', 'the token\'s name', 'parley setup')
    .addOption(new Option('--role <role>', 'what the token may do in the organization').choices(ROLE_NAMES).default('editor'))
    .addHelpText('after', '\nExample:\n  eval "$(parley setup --vendor-name Acme --organization-name Support)"\n  parley chat <assistant-id>')
    .action(async (options: SetupOptions) => {
      const client = loadClientConfig(io.env);
      const adminToken = options.adminToken ?? client.adminToken;
      if (!adminToken) throw new ConfigError('parley setup needs the platform admin token: set PARLEY_ADMIN_TOKEN or pass --admin-token (parley serve printed it on its first start)');
      const url = (options.url ?? client.url).replace(/\/+$/, '');
      const { vendor: vendorName, organization: organizationName } = await names(io, options);
      const { parley } = createApiClient(url, adminToken);
      const vendor = await parley.createVendor({ body: { name: vendorName } });
      const scope = parley.vendor(vendor.id);
      const organization = await scope.createOrganization({ body: { name: organizationName } });
      const token = await scope.createApiToken({ body: { name: options.tokenName, role: options.role, organizationId: organization.id } });
      io.stderr.write(
        `Created vendor "${vendorName}" (${vendor.id}), organization "${organizationName}" (${organization.id}) and ${/^[aeiou]/.test(options.role) ? 'an' : 'a'} ${options.role} token for it.\n` +
        'The token is shown only now. Run these lines (or eval "$(parley setup …)") to use them:\n',
      );
      io.stdout.write([
        `export PARLEY_URL=${quote(url)}`,
        `export PARLEY_TOKEN=${quote(token.token)}`,
        `export PARLEY_VENDOR=${quote(vendor.id)}`,
        `export PARLEY_ORGANIZATION=${quote(organization.id)}`,
      ].join('\n') + '\n');
      done(0);
    });
}
