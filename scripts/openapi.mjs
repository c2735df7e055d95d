#!/usr/bin/env node
// Writes the OpenAPI document that GET /v1/openapi.json serves to dist/openapi.json,
// from the compiled code (npm run openapi builds it first).
import fs from 'node:fs';
import path from 'node:path';
import { createRequire } from 'node:module';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const require = createRequire(path.join(root, 'package.json'));
const { openApiDocument } = require(path.join(root, 'dist', 'api', 'openapi.js'));
const target = path.join(root, 'dist', 'openapi.json');
fs.writeFileSync(target, `${JSON.stringify(openApiDocument(), null, 2)}\n`);
console.log(`wrote ${path.relative(root, target)}`);
