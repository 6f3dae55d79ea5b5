import { writeFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, loadClientConfig } from '../../config.ts';
import { createApiClient } from '../api-client.ts';
import { id } from '../arguments.ts';
import { EXIT, type CliIo, type Outcome } from '../io.ts';
import { junitXml } from './junit.ts';
import { runTest, type Organization, type TestResult } from '../../calls/testing/run.ts';
import { SuiteError, type Suite } from '../../calls/testing/suite.ts';
import { reportTest, summary } from './report.ts';
import { openWsSocket, resolveTarget } from './run.ts';
import { findSuiteFiles, loadSuite } from './suite.ts';

interface TestOptions {
  junit?: string;
  version?: number;
  timeout: number;
  url?: string;
  token?: string;
  vendor?: string;
  organization?: string;
}

function positive(name: string, max: number) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || n < 1 || n > max) throw new InvalidArgumentError(`Expected ${name}: an integer from 1 to ${max}.`);
    return n;
  };
}

const HELP = `
Test files are YAML named *.test.yaml (or .yml), one suite per file: the assistant or agent (by
name), and tests, each with the caller's side (scripted turns, or a persona and goal played by an
LLM), tool mocks and expectations. Folders are searched; with no argument, the current folder.
Tool webhooks are never called: the mocks answer them (the token needs assistants:write, or
agents:write, besides calls:write). docs/testing-assistants.md describes the format.

Exit codes: 0 every test passed, 1 a test failed, 2 a usage error (a file that does not read,
an assistant or version that does not exist, a bad flag).

Example:
  eval "$(parley setup)"   # PARLEY_URL, PARLEY_TOKEN, PARLEY_VENDOR, PARLEY_ORGANIZATION
  parley test tests/ --junit test-results/parley.xml
  parley test tests/orders.test.yaml --version 4`;

/** `parley test`: runs assistants' test files through real calls (text), prints a report, writes JUnit XML. */
export function testCommand(io: CliIo, done: (outcome: Outcome) => void): Command {
  return new Command('test')
    .summary('run the test files of assistants and agents (for CI)')
    .description('Run assistants\' and agents\' tests: each test is a real call over the call WebSocket (text), its tools answered by mocks, its transcript checked and judged.')
    .argument('[paths...]', 'test files or folders holding them (default: the current folder)')
    .option('--junit <file>', 'also write the results as JUnit XML to this file')
    .option('--version <n>', 'run this version of each assistant or agent (…/versions/{n}) instead of the current one', positive('a version number', 2_147_483_647))
    .option('--timeout <seconds>', 'the most one test may take', positive('seconds', 3600), 120)
    .option('--url <url>', 'the Parley service (env: PARLEY_URL; default http://127.0.0.1:$PORT, else 8080)')
    .option('--token <token>', 'an API token with calls:write and assistants:write (agents:write) (env: PARLEY_TOKEN)')
    .option('--vendor <id>', 'the vendor of the organization (env: PARLEY_VENDOR)', id)
    .option('--organization <id>', 'the organization of the assistants (env: PARLEY_ORGANIZATION)', id)
    .addHelpText('after', HELP)
    .action(async (paths: string[], options: TestOptions) => {
      const usage = (message: string) => {
        io.stderr.write(`parley test: ${message}\n`);
        done(EXIT.usage);
      };
      let suites: Suite[];
      try {
        suites = findSuiteFiles(paths).map(loadSuite);
      } catch (err) {
        if (err instanceof SuiteError) return usage(err.message);
        throw err;
      }
      const client = loadClientConfig(io.env);
      const token = options.token ?? client.token;
      const vendorId = options.vendor ?? client.vendor;
      const organizationId = options.organization ?? client.organization;
      if (!token) return usage('needs an API token with calls:write and assistants:write: set PARLEY_TOKEN or pass --token (parley setup makes one)');
      if (!vendorId || !organizationId) return usage('set PARLEY_VENDOR and PARLEY_ORGANIZATION (parley setup prints them), or pass --vendor and --organization');
      const api = createApiClient((options.url ?? client.url).replace(/\/+$/, ''), token);
      const org: Organization = api.parley.organization(vendorId, organizationId);
      const targets = new Map<string, Awaited<ReturnType<typeof resolveTarget>>>();
      for (const suite of suites) {
        const key = `${suite.kind}:${suite.target}`;
        if (targets.has(key)) continue;
        try {
          targets.set(key, await resolveTarget(org, suite.kind, suite.target, options.version ?? null));
        } catch (err) {
          if (err instanceof ConfigError) return usage(`${suite.file}: ${err.message}`);
          throw err;
        }
      }
      const results: TestResult[] = [];
      for (const suite of suites) {
        const target = targets.get(`${suite.kind}:${suite.target}`);
        if (!target) continue;
        io.stdout.write(`\n${suite.file}: ${suite.kind} "${suite.target}"${options.version ? `, version ${options.version}` : ''}\n`);
        for (const test of suite.tests) {
          const result = await runTest(org, target, suite, test, { version: options.version ?? null, timeoutMs: options.timeout * 1000, openSocket: openWsSocket });
          results.push(result);
          io.stdout.write(`${reportTest(result)}\n`);
        }
      }
      io.stdout.write(`${summary(results)}\n`);
      if (options.junit) {
        writeFileSync(options.junit, junitXml(results));
        io.stdout.write(`JUnit XML: ${options.junit}\n`);
      }
      done(results.every((r) => r.passed) ? EXIT.ok : EXIT.failed);
    });
}
