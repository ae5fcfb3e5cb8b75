import { execFileSync } from 'node:child_process';
import path from 'node:path';

/*
 * The library boundaries are lint rules (eslint.config.mjs). These cases lint small snippets as if
 * they sat in each library, with the real config, so a boundary that stops firing fails a test
 * instead of rotting silently.
 */

interface Message {
  ruleId: string | null;
  message: string;
  fatal: boolean;
}

const root = path.resolve(__dirname, '../..');

type Case = readonly [file: string, code: string, verdict: 'forbidden' | 'allowed'];

const cases: readonly Case[] = [
  // contracts: only zod
  ['libs/contracts/src/probe.ts', "import { z } from 'zod';", 'allowed'],
  ['libs/contracts/src/probe.ts', "import { SubjectToken } from './ids';", 'allowed'],
  ['libs/contracts/src/probe.ts', "import { decide } from '@ratchet/domain';", 'forbidden'],
  ['libs/contracts/src/probe.ts', "import { readFileSync } from 'node:fs';", 'forbidden'],
  // The documented request-id derivation (request-ids.ts) needs a hash.
  ['libs/contracts/src/probe.ts', "import { createHash } from 'node:crypto';", 'allowed'],
  // domain: pure
  ['libs/domain/src/probe.ts', "import { Injectable } from '@nestjs/common';", 'forbidden'],
  ['libs/domain/src/probe.ts', "import type { Injectable } from '@nestjs/common';", 'forbidden'],
  ['libs/domain/src/probe.ts', "export { EntityManager } from '@mikro-orm/core';", 'forbidden'],
  ['libs/domain/src/probe.ts', "import { connect } from 'nats';", 'forbidden'],
  ['libs/domain/src/probe.ts', "import { Pool } from 'pg';", 'forbidden'],
  ['libs/domain/src/probe.ts', "import { NodeSDK } from '@opentelemetry/sdk-node';", 'forbidden'],
  [
    'libs/domain/src/probe.ts',
    "import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';",
    'forbidden',
  ],
  ['libs/domain/src/probe.ts', "import { readFile } from 'node:fs/promises';", 'forbidden'],
  ['libs/domain/src/probe.ts', "import { randomUUID } from 'crypto';", 'forbidden'],
  ['libs/domain/src/probe.ts', "import { request } from 'http';", 'forbidden'],
  ['libs/domain/src/probe.ts', "import { x } from '@ratchet/adapters';", 'forbidden'],
  ['libs/domain/src/probe.ts', "import { x } from '@ratchet/platform';", 'forbidden'],
  ['libs/domain/src/probe.ts', "import { ThreadId } from '@ratchet/contracts';", 'allowed'],
  ['libs/domain/src/probe.ts', "import { z } from 'zod';", 'allowed'],
  // adapters: framework-free
  ['libs/adapters/src/probe.ts', "import { Injectable } from '@nestjs/common';", 'forbidden'],
  ['libs/adapters/src/probe.ts', "import { x } from '@ratchet/platform';", 'forbidden'],
  ['libs/adapters/src/probe.ts', "import { Pool } from 'pg';", 'allowed'],
  ['libs/adapters/src/probe.ts', "import { connect } from 'nats';", 'allowed'],
  ['libs/adapters/src/probe.ts', "import { ThreadId } from '@ratchet/contracts';", 'allowed'],
  // engine: above platform, below the apps, framework-free
  ['libs/engine/src/probe.ts', "import { failpoint } from '@ratchet/platform';", 'allowed'],
  ['libs/engine/src/probe.ts', "import { decide } from '@ratchet/domain';", 'allowed'],
  ['libs/engine/src/probe.ts', "import { Injectable } from '@nestjs/common';", 'forbidden'],
  ['libs/engine/src/probe.ts', "import { PgThreadStore } from '@ratchet/adapters';", 'forbidden'],
  ['libs/engine/src/probe.ts', "import { runTool } from '@ratchet/tools';", 'forbidden'],
  ['libs/platform/src/probe.ts', "import { ThreadCommandHandler } from '@ratchet/engine';", 'forbidden'],
  ['libs/domain/src/probe.ts', "import { ThreadCommandHandler } from '@ratchet/engine';", 'forbidden'],
  ['libs/adapters/src/probe.ts', "import { ThreadCommandHandler } from '@ratchet/engine';", 'forbidden'],
  ['apps/orchestrator/src/probe.ts', "import { ThreadCommandHandler } from '@ratchet/engine';", 'allowed'],
  // operator queries: a second entry for the CLI, nobody else
  ['apps/cli/src/probe.ts', "import { listThreads } from '@ratchet/adapters/operator';", 'allowed'],
  ['apps/gateway/src/probe.ts', "import { listThreads } from '@ratchet/adapters/operator';", 'forbidden'],
  ['libs/platform/src/probe.ts', "import { listThreads } from '@ratchet/adapters/operator';", 'forbidden'],
  ['apps/cli/src/probe.ts', "import { listThreads } from '@ratchet/adapters/src/postgres';", 'forbidden'],
  // operator: the CLI's commands without their arguments, for the CLI only
  ['libs/operator/src/probe.ts', "import { listThreads } from '@ratchet/adapters/operator';", 'allowed'],
  ['libs/operator/src/probe.ts', "import { Command } from 'commander';", 'forbidden'],
  ['libs/operator/src/probe.ts', "import { AppModule } from '@ratchet/gateway';", 'forbidden'],
  ['apps/cli/src/probe.ts', "import { showThreads } from '@ratchet/operator';", 'allowed'],
  ['apps/gateway/src/probe.ts', "import { showThreads } from '@ratchet/operator';", 'forbidden'],
  ['libs/platform/src/probe.ts', "import { showThreads } from '@ratchet/operator';", 'forbidden'],
  ['libs/domain/src/probe.ts', "import { showThreads } from '@ratchet/operator';", 'forbidden'],
  // jobs: framework-free timed work above platform and tools, for the services
  ['libs/jobs/src/probe.ts', "import { claimDueSchedules } from '@ratchet/adapters';", 'allowed'],
  ['libs/jobs/src/probe.ts', "import { EgressPolicy } from '@ratchet/tools';", 'allowed'],
  ['libs/jobs/src/probe.ts', "import { Injectable } from '@nestjs/common';", 'forbidden'],
  ['apps/orchestrator/src/probe.ts', "import { ScheduleTicker } from '@ratchet/jobs';", 'allowed'],
  ['libs/platform/src/probe.ts', "import { ScheduleTicker } from '@ratchet/jobs';", 'forbidden'],
  ['libs/adapters/src/probe.ts', "import { ScheduleTicker } from '@ratchet/jobs';", 'forbidden'],
  // agents: the agent catalog and approval rules, above the engine, for the orchestrator and libs/requests
  ['libs/agents/src/probe.ts', "import type { CommandEnricher } from '@ratchet/engine';", 'allowed'],
  ['libs/agents/src/probe.ts', "import { Injectable } from '@nestjs/common';", 'forbidden'],
  ['libs/agents/src/probe.ts', "import { ThreadsApi } from '@ratchet/requests';", 'forbidden'],
  ['apps/orchestrator/src/probe.ts', "import { AgentCatalog } from '@ratchet/agents';", 'allowed'],
  ['libs/engine/src/probe.ts', "import { AgentCatalog } from '@ratchet/agents';", 'forbidden'],
  ['libs/jobs/src/probe.ts', "import { AgentCatalog } from '@ratchet/agents';", 'forbidden'],
  ['libs/platform/src/probe.ts', "import { AgentCatalog } from '@ratchet/agents';", 'forbidden'],
  // requests: the services' request APIs, framework-free, for the apps
  ['libs/requests/src/probe.ts', "import { AgentCatalog } from '@ratchet/agents';", 'allowed'],
  ['libs/requests/src/probe.ts', "import { getThread } from '@ratchet/adapters';", 'allowed'],
  ['libs/requests/src/probe.ts', "import { Injectable } from '@nestjs/common';", 'forbidden'],
  ['apps/memory/src/probe.ts', "import { MemoryApi } from '@ratchet/requests';", 'allowed'],
  ['libs/adapters/src/probe.ts', "import { MemoryApi } from '@ratchet/requests';", 'forbidden'],
  ['libs/jobs/src/probe.ts', "import { ThreadsApi } from '@ratchet/requests';", 'forbidden'],
  ['libs/engine/src/probe.ts', "import { ThreadsApi } from '@ratchet/requests';", 'forbidden'],
  // http-edge: the gateway's HTTP edge
  ['apps/gateway/src/probe.ts', "import { parseRequest } from '@ratchet/http-edge';", 'allowed'],
  ['libs/domain/src/probe.ts', "import { parseRequest } from '@ratchet/http-edge';", 'forbidden'],
  ['libs/engine/src/probe.ts', "import { parseRequest } from '@ratchet/http-edge';", 'forbidden'],
  // no library imports an app
  ['libs/platform/src/probe.ts', "import { AppModule } from '@ratchet/gateway';", 'forbidden'],
  ['libs/platform/src/probe.ts', "import { AppModule } from '../../../apps/gateway/src/app.module';", 'forbidden'],
  ['libs/platform/src/probe.ts', "import { Injectable } from '@nestjs/common';", 'allowed'],
  // apps wire libraries, never each other
  ['apps/orchestrator/src/probe.ts', "import { AppModule } from '@ratchet/gateway';", 'forbidden'],
  ['apps/orchestrator/src/probe.ts', "import { x } from '@ratchet/platform';", 'allowed'],
  // one public entry per library, everywhere
  ['apps/orchestrator/src/probe.ts', "import { ThreadId } from '@ratchet/contracts/src/ids';", 'forbidden'],
  ['libs/adapters/src/probe.ts', "import { x } from '@ratchet/domain/src/thread';", 'forbidden'],
  ['test/probe.ts', "import { x } from '@ratchet/testing/src/global-setup';", 'forbidden'],
  ['libs/domain/src/probe.ts', "import contracts from '../../contracts/package.json';", 'forbidden'],
  ['libs/contracts/src/probe.ts', "import domain from '../../domain/package.json';", 'forbidden'],
];

let results: Message[][];

beforeAll(() => {
  // The ESLint Node API runs in a child process: it loads eslint.config.mjs with a dynamic import,
  // which jest's sandbox refuses.
  const input = cases.map(([filePath, code]) => ({ filePath, code: `${code}\nexport const probe = 1;\n` }));
  const out = execFileSync(process.execPath, [path.join(__dirname, 'lint-snippets.mjs')], {
    cwd: root,
    input: JSON.stringify(input),
    encoding: 'utf8',
    timeout: 60_000,
  });
  results = JSON.parse(out) as Message[][];
}, 60_000);

describe.each(cases.map((c, index) => [...c, index] as const))('%s: %s', (_file, _code, verdict, index) => {
  it(`is ${verdict}`, () => {
    const messages = results[index] ?? [];
    expect(messages.filter((m) => m.fatal)).toEqual([]);
    const boundary = messages.filter(
      (m) => m.ruleId === 'no-restricted-imports' || m.ruleId === 'import/no-relative-packages',
    );
    if (verdict === 'forbidden') expect(boundary).not.toHaveLength(0);
    else expect(boundary).toEqual([]);
  });
});
