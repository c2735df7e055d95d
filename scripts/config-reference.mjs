#!/usr/bin/env node
// Writes the configuration reference into docs/configuration.md (between its markers), from the
// compiled code: every component's settings, their defaults and lines (npm run config:reference builds it first).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const require = createRequire(path.join(root, 'package.json'));
const { withReference } = require(path.join(root, 'dist', 'service', 'config-reference.js'));
const target = path.join(root, 'docs', 'configuration.md');
const page = fs.readFileSync(target, 'utf8');
const updated = withReference(page);
if (updated === page) console.log(`${path.relative(root, target)} is up to date`);
else {
  fs.writeFileSync(target, updated);
  console.log(`wrote ${path.relative(root, target)}`);
}
