import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseSuite, SuiteError, type Suite } from '../../calls/testing/suite.ts';

/* Where `parley test` finds its test files: *.test.yaml (or .yml) beside the configuration. */

const SUFFIX = /\.test\.ya?ml$/;

/** The test files of the arguments: files as given, folders searched (recursively, node_modules and dot folders skipped). */
export function findSuiteFiles(paths: readonly string[]): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (SUFFIX.test(entry.name)) found.push(path);
    }
  };
  for (const path of paths.length ? paths : ['.']) {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      throw new SuiteError(`${path}: no such file or folder`);
    }
    if (stat.isDirectory()) walk(path);
    else found.push(path);
  }
  if (!found.length) throw new SuiteError(`No test files (*.test.yaml) in ${paths.length ? paths.join(', ') : 'this folder'}`);
  return found.map((f) => (relative('.', f).startsWith('..') ? f : relative('.', f) || f));
}

/** One test file read and checked: its target, and tests that can run. */
export function loadSuite(file: string): Suite {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new SuiteError(`${file}: cannot be read (${(err as Error).message})`);
  }
  return parseSuite(file, text);
}
