// The dashboard in a real browser: a real tune-daemon with --http and one local worker, a small
// job submitted with tune-client, the page loaded in headless Chromium (puppeteer-core). It must
// list the job, draw one point per successful trial on the job's convergence plot once the job
// has ended (the count comes from the JSON API), and log no console error on the way.
//
// Run by ctest (dashboard_browser, labels e2e and browser), which passes the binaries:
//   TUNE_DAEMON=build/bin/tune-daemon TUNE_CLIENT=build/bin/tune-client \
//   TUNE_SERVER=build/bin/tune-server node --test tests/web/dashboard.test.mjs
// Every wait is on an event (a file appearing, a process ending, a selector or a condition in
// the page), each with a generous limit; none is a fixed sleep.
import assert from 'node:assert/strict';
import {execFile, spawn} from 'node:child_process';
import {once} from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {after, before, test} from 'node:test';
import {promisify} from 'node:util';

import puppeteer from 'puppeteer-core';

const run = promisify(execFile);

const CHROMIUM = process.env.TUNE_CHROMIUM || '/usr/bin/chromium';
const STARTUP_MS = 60_000;
const JOB_MS = 240_000;

function binary(name) {
  const file = process.env[name];
  assert.ok(file, `${name} must name the built binary (ctest sets it)`);
  return file;
}

// The number in `file` once it exists (a watch on its directory, which also sees the atomic
// rename that writes it); fails when the daemon exits first or after `timeoutMs`.
function fileAppears(file, timeoutMs, daemon) {
  return new Promise((resolve, reject) => {
    const watcher = fs.watch(path.dirname(file));
    let settled = false;
    const finish = (error) => {
      if (settled) {
        return;
      }
      settled = true;
      clearTimeout(limit);
      watcher.close();
      daemon.off('exit', onExit);
      if (error) {
        reject(error);
      } else {
        resolve(Number(fs.readFileSync(file, 'utf8').trim()));
      }
    };
    const check = () => {
      if (fs.existsSync(file)) {
        finish();
      }
    };
    const onExit = (code) => finish(new Error(`tune-daemon exited (${code}) before writing ${file}`));
    const limit = setTimeout(() => finish(new Error(`no ${file} after ${timeoutMs} ms`)), timeoutMs);
    watcher.on('change', check);
    daemon.on('exit', onExit);
    check();
  });
}

let dir;
let daemon;
let daemonLog = '';
let grpcPort;
let httpPort;
let browser;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tune-web-'));
  daemon = spawn(binary('TUNE_DAEMON'), [
    '--db', path.join(dir, 'tuning.db'),
    '--listen', '127.0.0.1:0', '--port-file', path.join(dir, 'grpc.port'),
    '--http', '127.0.0.1:0', '--http-port-file', path.join(dir, 'http.port'),
    '--local-workers', '1', '--worker-binary', binary('TUNE_SERVER'),
    '--heartbeat-ms', '200', '--build-threads', '1', '--log-format', 'json',
  ], {stdio: ['ignore', 'ignore', 'pipe']});
  daemon.stderr.setEncoding('utf8');
  daemon.stderr.on('data', (text) => { daemonLog += text; });
  // The gRPC port file is written last, once the daemon serves (HTTP included).
  grpcPort = await fileAppears(path.join(dir, 'grpc.port'), STARTUP_MS, daemon);
  httpPort = Number(fs.readFileSync(path.join(dir, 'http.port'), 'utf8').trim());
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Root (CI) needs --no-sandbox; the page comes from a daemon of this test only.
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
  });
});

after(async () => {
  await browser?.close();
  if (daemon && daemon.exitCode === null) {
    const exited = once(daemon, 'exit');
    daemon.kill('SIGTERM');
    await exited;
  }
  if (dir) {
    fs.rmSync(dir, {recursive: true, force: true});
  }
});

test('the dashboard lists a job and plots one point per successful trial', {timeout: JOB_MS + 60_000},
     async (t) => {
  const submitted = await run(binary('TUNE_CLIENT'), [
    '--daemon', `127.0.0.1:${grpcPort}`, 'submit', '--workload', 'gemm:M=32,N=32,K=32',
    '--target', 'llvm -mcpu=native -threads=1', '--trials', '6', '--strategy', 'random',
    '--number', '1', '--repeat', '2', '--min-repeat-ms', '1', '--name', 'browser-test',
  ]);
  const jobId = Number(submitted.stdout.split('\n')[0]);
  assert.ok(jobId > 0, `tune-client printed no job id: ${submitted.stdout}`);

  const page = await browser.newPage();
  const consoleErrors = [];
  page.on('console', (message) => {
    if (message.type() === 'error') {
      consoleErrors.push(message.text());
    }
  });
  page.on('pageerror', (error) => consoleErrors.push(error.message));
  t.after(() => page.close());

  // Loaded while the job may still run: the page must follow it live.
  await page.goto(`http://127.0.0.1:${httpPort}/`, {waitUntil: 'load'});
  const row = await page.waitForSelector(`#jobs tr[data-job-id="${jobId}"]`, {timeout: JOB_MS});
  assert.match(await row.evaluate((tr) => tr.textContent), /gemm:M=32,N=32,K=32/);
  await page.waitForSelector('#workers tbody tr', {timeout: STARTUP_MS});

  await row.$eval('a', (link) => link.click());
  await page.waitForSelector('#job-view:not([hidden]) svg.convergence', {timeout: JOB_MS});
  // Once the job has ended, its plot holds exactly its successful trials.
  const settled = await page.waitForFunction(async (id) => {
    const response = await fetch(`/api/jobs/${id}`, {cache: 'no-store'});
    const job = await response.json();
    if (!['SUCCEEDED', 'FAILED', 'CANCELLED'].includes(job.state)) {
      return false;
    }
    const points = document.querySelectorAll('#plots svg.convergence circle.point').length;
    const successful = job.trials_done - job.trials_failed;
    return points === successful ? {state: job.state, points, successful} : false;
  }, {timeout: JOB_MS, polling: 250}, jobId);
  const result = await settled.jsonValue();
  assert.equal(result.state, 'SUCCEEDED', daemonLog);
  assert.ok(result.successful > 0, 'the job measured nothing successfully');

  // The JSON API's records agree: its successful trials (not the finalists' re-measurements).
  const records = await page.evaluate(async (id) => {
    const response = await fetch(`/api/jobs/${id}/records`, {cache: 'no-store'});
    return (await response.json()).records;
  }, jobId);
  const trials = records.filter((r) => !r.final && r.error === 'NONE');
  assert.equal(trials.length, result.points);
  await page.waitForFunction(
      (n) => document.querySelectorAll('#records tbody tr').length === n,
      {timeout: STARTUP_MS}, records.length);

  assert.deepEqual(consoleErrors, [], 'the page logged errors');
});

test('the dashboard lists code that crashed on two workers as quarantined', {timeout: JOB_MS},
     async (t) => {
  // A measured record of the first test's job, imported twice as crashes of its code on two
  // other workers: the log quarantines the code as those records land.
  const daemonAddress = `127.0.0.1:${grpcPort}`;
  const exported = path.join(dir, 'records.jsonl');
  await run(binary('TUNE_CLIENT'), ['--daemon', daemonAddress, 'export', '--out', exported]);
  const measured = fs.readFileSync(exported, 'utf8').split('\n').filter((l) => l)
      .map((l) => JSON.parse(l)).find((r) => r.artifact_hash);
  assert.ok(measured, 'no exported record names its code');
  const crashes = ['web-left', 'web-right'].map((worker) => JSON.stringify({
    ...measured, uid: `${worker}-${measured.uid}`, worker, error: 'RUNTIME_CRASH',
    message: 'SIGSEGV', round_secs: [], number: 0,
  }));
  const crashFile = path.join(dir, 'crashes.jsonl');
  fs.writeFileSync(crashFile, crashes.join('\n') + '\n');
  await run(binary('TUNE_CLIENT'), ['--daemon', daemonAddress, 'import', crashFile]);

  const page = await browser.newPage();
  t.after(() => page.close());
  await page.goto(`http://127.0.0.1:${httpPort}/`, {waitUntil: 'load'});
  const row = await page.waitForSelector('#quarantine tbody tr', {timeout: STARTUP_MS});
  const text = await row.evaluate((tr) => tr.textContent);
  assert.match(text, /web-left, web-right/);
  assert.match(text, /RUNTIME_CRASH: SIGSEGV/);
  assert.match(text, new RegExp(measured.workload.replace(/[=,:]/g, '.')));
  assert.equal(await page.$eval('#quarantine-empty', (p) => p.hidden), true);
});

test('the dashboard shows each device fingerprint, the newest marked', {timeout: JOB_MS},
     async (t) => {
  const page = await browser.newPage();
  t.after(() => page.close());
  await page.goto(`http://127.0.0.1:${httpPort}/`, {waitUntil: 'load'});
  const row = await page.waitForSelector('#fingerprints tbody tr[data-newest="1"]',
                                         {timeout: STARTUP_MS});
  const text = await row.evaluate((tr) => tr.textContent);
  assert.match(text, /cpu\/x86_64\//);
  assert.match(text, / fp=2 /);
  assert.match(text, /newest/);
  assert.equal(await page.$eval('#fingerprints-empty', (p) => p.hidden), true);
});

test('the daemon and its local worker log JSON objects with --log-format json', () => {
  // Complete lines only (the last piece may be a line still being written). What builder and
  // measurement processes or kernels print themselves is raw text, not log entries.
  const lines = daemonLog.split('\n').slice(0, -1).filter((line) => line.startsWith('{'));
  const loggers = new Set();
  for (const line of lines) {
    const entry = JSON.parse(line);
    assert.deepEqual(Object.keys(entry), ['time', 'level', 'logger', 'message', 'pid']);
    assert.match(entry.time, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    loggers.add(entry.logger);
  }
  for (const logger of ['daemon', 'http', 'worker']) {
    assert.ok(loggers.has(logger), `no JSON entry of logger ${logger} in:\n${daemonLog}`);
  }
});
