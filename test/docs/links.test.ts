import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const ROOT = resolve('.');

/** README.md and every page under docs/ (and its subfolders). */
function pages(): string[] {
  const found = ['README.md'];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.md')) found.push(path);
    }
  };
  walk('docs');
  return found;
}

/** The targets of a page's Markdown links and images, without any #fragment, external URLs left out. */
function localTargets(markdown: string): string[] {
  const prose = markdown.replace(/```[\s\S]*?```/g, '');
  const targets = [...prose.matchAll(/!?\[[^\]]*\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)].map((m) => m[1] as string);
  return targets.filter((t) => !/^[a-z][a-z0-9+.-]*:/i.test(t) && !t.startsWith('#')).map((t) => decodeURIComponent(t.split('#')[0] as string));
}

describe('docs stand alone', () => {
  it('every relative link of README.md and docs/ names a file inside the repository that exists', () => {
    const broken: string[] = [];
    for (const page of pages()) {
      for (const target of localTargets(readFileSync(page, 'utf8'))) {
        const path = resolve(dirname(page), target);
        const inside = !relative(ROOT, path).startsWith('..');
        if (!inside || !existsSync(path)) broken.push(`${page} -> ${target}${inside ? '' : ' (outside the repository)'}`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('no page cites the specification folders that live beside the repository', () => {
    const citing = pages().filter((page) => /\.\.\/shared\/|shared\/spec\/|shared\/style\.md/.test(readFileSync(page, 'utf8')));
    assert.deepEqual(citing, []);
  });
});
