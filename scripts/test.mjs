#!/usr/bin/env node
// `npm test`: vitest, and beside it the static checks (types, lint, layers, exports) one after another.
// The checks are about 40 CPU-seconds; run first, they added that to every run. At the
// lowest priority they take only what the tests leave: the test files' waits (servers starting,
// streams, retries) and the free core while the last two files run on an otherwise idle machine.
// Arguments go to vitest: `npm test -- test/api` runs those files (the checks still run in full).
import { spawn } from 'node:child_process';
import { constants, setPriority } from 'node:os';

const CHECKS = ['typecheck', 'lint', 'lint:deps', 'lint:exports'];

/** Runs a command to its end; its output is kept for later unless it goes straight to the terminal. */
function run(command, args, { quiet, lowPriority = false }) {
  return new Promise((resolve) => {
    const started = Date.now();
    const child = spawn(command, args, { stdio: quiet ? ['ignore', 'pipe', 'pipe'] : 'inherit' });
    // Set before npm has started its own child, which inherits it.
    if (lowPriority && child.pid) setPriority(child.pid, constants.priority.PRIORITY_LOW);
    let output = '';
    child.stdout?.on('data', (chunk) => (output += chunk));
    child.stderr?.on('data', (chunk) => (output += chunk));
    child.on('error', (error) => resolve({ ok: false, output: `${error.message}\n`, seconds: 0 }));
    child.on('close', (code) => resolve({ ok: code === 0, output, seconds: Math.round((Date.now() - started) / 1000) }));
  });
}

async function runChecks() {
  const results = [];
  for (const name of CHECKS) results.push({ name, ...(await run('npm', ['run', '--silent', name], { quiet: true, lowPriority: true })) });
  return results;
}

const [checks, tests] = await Promise.all([runChecks(), run('vitest', ['run', ...process.argv.slice(2)], { quiet: false })]);

const failed = checks.filter((check) => !check.ok);
for (const check of failed) process.stdout.write(`\nnpm run ${check.name} failed:\n${check.output}`);
process.stdout.write(
  `\nstatic checks ${failed.length === 0 ? 'passed' : `failed (${failed.map((check) => check.name).join(', ')})`}: ` +
    `${checks.map((check) => `${check.name} ${check.seconds} s`).join(', ')}\n`,
);
process.exitCode = failed.length === 0 && tests.ok ? 0 : 1;
