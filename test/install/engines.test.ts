import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

interface Installed {
  path: string;
  name: string;
  version: string;
  node: string | undefined;
}

/** Every package installed under node_modules (nested ones included), with its engines.node. */
function installedPackages(dir: string, found: Installed[] = []): Installed[] {
  if (!existsSync(dir)) return found;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (!entry.isDirectory() || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.name.startsWith('@')) {
      installedPackages(path, found);
      continue;
    }
    const manifest = join(path, 'package.json');
    if (existsSync(manifest)) {
      const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
      const engines = pkg.engines as Record<string, unknown> | undefined;
      const node = typeof engines?.node === 'string' ? engines.node : undefined;
      found.push({ path, name: pkg.name, version: pkg.version, node });
    }
    installedPackages(join(path, 'node_modules'), found);
  }
  return found;
}

describe('a clean install on the Node version that runs the suite', () => {
  it('every installed package accepts this Node version (npm install prints no EBADENGINE)', () => {
    const packages = installedPackages('node_modules');
    assert.ok(packages.length > 100, `found ${packages.length} installed packages: is node_modules there?`);
    const refused = packages
      .filter((p) => p.node !== undefined && semver.validRange(p.node) !== null && !semver.satisfies(process.version, p.node, { includePrerelease: true }))
      .map((p) => `${p.name}@${p.version} (${p.path}) wants node ${p.node}`);
    assert.deepEqual(refused, [], `packages whose engines refuse ${process.version}; pin a major that accepts it (package.json overrides, docs/architecture.md)`);
  });

  it('the service itself declares the Node versions it runs on, and this is one of them', () => {
    const own = JSON.parse(readFileSync('package.json', 'utf8'));
    assert.ok(semver.satisfies(process.version, own.engines.node), `${process.version} against ${own.engines.node}`);
  });
});
