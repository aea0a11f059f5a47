// tune-daemon's dashboard: polls the JSON API (/api/...) and draws the jobs, the workers and a
// job's convergence and records. No framework: the DOM is built with textContent only, so no
// text from the daemon is ever read as HTML.
import {convergencePlot} from './plot.js';

const POLL_MS = 1500;
const TOKEN_KEY = 'tune.token';
const MAX_RECORD_ROWS = 500;

class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.status = status;
  }
}

// GET `path` as JSON, with the session's token when it has one.
async function api(path) {
  const headers = {};
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (token) {
    headers.Authorization = `Bearer ${token}`;
  }
  const response = await fetch(path, {headers, cache: 'no-store'});
  let body = null;
  try {
    body = await response.json();
  } catch {
    body = null;
  }
  if (!response.ok) {
    throw new ApiError(response.status, body?.error?.message ?? response.statusText);
  }
  return body;
}

// --- formatting -----------------------------------------------------------------------------

function el(tag, attributes = {}, ...children) {
  const element = document.createElement(tag);
  for (const [key, value] of Object.entries(attributes)) {
    if (key === 'class') {
      element.className = value;
    } else if (key === 'dataset') {
      Object.assign(element.dataset, value);
    } else {
      element.setAttribute(key, value);
    }
  }
  for (const child of children) {
    element.append(child instanceof Node ? child : String(child ?? ''));
  }
  return element;
}

function duration(seconds) {
  if (seconds === null || seconds === undefined || seconds < 0) {
    return '–';
  }
  const s = Math.round(seconds);
  if (s < 60) {
    return `${s}s`;
  }
  if (s < 3600) {
    return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  }
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

function secondsText(secs) {
  if (!(secs > 0)) {
    return '–';
  }
  if (secs < 1e-3) {
    return `${(secs * 1e6).toPrecision(3)} µs`;
  }
  if (secs < 1) {
    return `${(secs * 1e3).toPrecision(3)} ms`;
  }
  return `${secs.toPrecision(3)} s`;
}

function timeText(ms) {
  return ms > 0 ? new Date(ms).toLocaleString() : '–';
}

function isFinal(state) {
  return state === 'SUCCEEDED' || state === 'FAILED' || state === 'CANCELLED';
}

function jobLabel(job) {
  if (job.range) {
    return `range ${job.range}: ${job.tasks.length} sizes`;
  }
  if (job.tasks) {
    return `model: ${job.tasks.length} workloads`;
  }
  return job.workload;
}

// The unit of a job's or record's rates: GOPS for the integer dtypes, GFLOPS otherwise.
function rateUnit(item) {
  return item.rate_unit || 'GFLOPS';
}

function bestText(job) {
  if (job.tasks) {
    return job.estimated_total_secs ? `${secondsText(job.estimated_total_secs)} / inference` : '–';
  }
  return job.best ? `${job.best.gflops.toFixed(2)} ${rateUnit(job)} (${secondsText(job.best.secs)})`
                  : '–';
}

function progress(job) {
  const total = Math.max(job.trials, 1);
  const done = Math.min(job.trials_done, total);
  const fill = el('div', {class: 'fill'});
  fill.style.width = `${(100 * done) / total}%`;  // CSSOM, which the page's CSP allows
  const bar = el('div', {class: 'bar'}, fill);
  const failed = job.trials_failed > 0 ? ` (${job.trials_failed} failed)` : '';
  return el('div', {class: 'progress'}, bar, el('span', {}, `${job.trials_done}/${job.trials}${failed}`));
}

function etaText(job) {
  if (isFinal(job.state)) {
    return 'done';
  }
  return duration(job.eta_seconds);
}

function setRows(tbody, rows) {
  tbody.replaceChildren(...rows);
}

// --- views ----------------------------------------------------------------------------------

function renderJobs(jobs) {
  // A model job's tasks are jobs of their own; they show on their model job's page.
  const top = jobs.filter((job) => !job.model_job_id);
  setRows(document.querySelector('#jobs tbody'), top.map((job) => {
    const link = el('a', {href: `#/jobs/${job.job_id}`}, `${job.job_id}${job.name ? ` ${job.name}` : ''}`);
    return el('tr', {dataset: {jobId: String(job.job_id)}, class: `state-${job.state.toLowerCase()}`},
              el('td', {}, link), el('td', {class: 'mono'}, jobLabel(job)),
              el('td', {class: 'state'}, job.state), el('td', {}, progress(job)),
              el('td', {}, bestText(job)), el('td', {}, etaText(job)),
              el('td', {}, timeText(job.created_at_ms)));
  }));
  document.getElementById('jobs-empty').hidden = top.length > 0;
}

function capabilities(worker) {
  const parts = [`${worker.threads} threads`, `capacity ${worker.capacity}`];
  const libs = worker.preloaded_libraries.map((path) => path.split('/').pop());
  if (libs.length > 0) {
    parts.push(libs.join(', '));
  }
  const dtypes = worker.dtypes || ['f32'];
  parts.push(`dtypes ${dtypes.join(', ')}`);
  const matrix = worker.matrix_features || [];
  if (matrix.length > 0) {
    parts.push(matrix.join(', '));
  }
  return parts.join(' · ');
}

function renderWorkers(workers) {
  const now = Date.now();
  setRows(document.querySelector('#workers tbody'), workers.map((w) =>
    el('tr', {dataset: {worker: w.name}},
       el('td', {}, w.name), el('td', {class: 'mono'}, w.device_key), el('td', {}, w.state),
       el('td', {}, capabilities(w)), el('td', {}, w.in_flight), el('td', {}, w.trials_done),
       el('td', {}, `${duration(Math.max(0, (now - w.last_heartbeat_ms) / 1000))} ago`))));
  document.getElementById('workers-empty').hidden = workers.length > 0;
}

// Code that crashed or computed wrong on two workers of a device key and fingerprint, which no
// worker of that key and fingerprint gets again (tune-client quarantine).
function renderQuarantine(entries) {
  setRows(document.querySelector('#quarantine tbody'), entries.map((e) =>
    el('tr', {dataset: {entry: e.id}, title: `fingerprint: ${e.fingerprint}`},
       el('td', {}, e.id), el('td', {class: 'mono'}, e.device_key),
       el('td', {class: 'mono'},
          `${e.template} ${JSON.stringify(JSON.parse(e.config))} of ${e.workload}`),
       el('td', {}, `${e.error}: ${e.message}`), el('td', {}, e.workers.join(', ')),
       el('td', {}, new Date(e.created_at_ms).toLocaleString()))));
  document.getElementById('quarantine-empty').hidden = entries.length > 0;
}

// Each device's fingerprints, newest first: best prefers the newest's records; a winner measured
// only under an older one is unverified until tune-client reverify re-measures it.
function renderFingerprints(fingerprints) {
  setRows(document.querySelector('#fingerprints tbody'), fingerprints.map((f) =>
    el('tr', {dataset: {newest: f.newest ? '1' : '0'}},
       el('td', {class: 'mono'}, f.device_key), el('td', {class: 'mono'}, f.fingerprint),
       el('td', {}, new Date(f.first_seen_ms).toLocaleString()),
       el('td', {}, f.newest ? 'newest'
                             : 'older: its winners are unverified where the newest has none'))));
  document.getElementById('fingerprints-empty').hidden = fingerprints.length > 0;
}

// Each job's records fetched so far, so that a poll asks only for the new ones.
const recordCache = new Map();

async function recordsOf(jobId) {
  let cached = recordCache.get(jobId);
  if (!cached) {
    cached = {after: 0, records: []};
    recordCache.set(jobId, cached);
  }
  for (;;) {
    const page = await api(`/api/jobs/${jobId}/records?after=${cached.after}`);
    cached.records.push(...page.records);
    cached.after = page.next_after;
    if (!page.more) {
      return cached.records;
    }
  }
}

function renderSummary(job) {
  const rows = [
    ['State', job.state],
    [job.tasks ? 'Workloads' : 'Workload', jobLabel(job)],
    ['Target', job.target],
    ['Device key', job.device_key],
    ['Strategy', job.strategy],
    ['Trials', `${job.trials_done}/${job.trials} done, ${job.trials_failed} failed, ${job.trials_in_flight} in flight`],
    ['Best', bestText(job)],
    ['ETA', etaText(job)],
    ['Created', timeText(job.created_at_ms)],
    ['Finished', timeText(job.finished_at_ms)],
  ];
  if (job.best && !job.tasks) {
    rows.splice(7, 0, ['Best config', `${job.best.template} ${job.best.config}`]);
  }
  if (job.message) {
    rows.push(['Message', job.message]);
  }
  for (const task of job.tasks ?? []) {
    const best = task.best ? `${task.best.gflops.toFixed(2)} GFLOPS` : '–';
    rows.push([`Task ${task.job_id}`,
               `${task.workload} · ${task.state} · ${task.trials_done}/${task.trials_allocated} trials · ${best}`]);
  }
  document.getElementById('job-summary').replaceChildren(
      ...rows.flatMap(([term, value]) => [el('dt', {}, term), el('dd', {}, value)]));
}

// Plots are redrawn only when their records changed.
const drawn = new Map();

function renderPlots(series) {
  const container = document.getElementById('plots');
  const keep = new Set();
  for (const {key, title, records} of series) {
    keep.add(key);
    const stamp = `${records.length}`;
    const existing = drawn.get(key);
    if (existing && existing.stamp === stamp && existing.figure.isConnected) {
      continue;
    }
    const figure = el('figure', {dataset: {plot: key}}, convergencePlot(title, records));
    if (existing?.figure.isConnected) {
      existing.figure.replaceWith(figure);
    } else {
      container.append(figure);
    }
    drawn.set(key, {stamp, figure});
  }
  for (const [key, {figure}] of drawn) {
    if (!keep.has(key)) {
      figure.remove();
      drawn.delete(key);
    }
  }
}

// A record's median; GPU records name their clock (graph replay, or events: call by call) and a
// graph-timed one gives its call-by-call reading on hover.
function medianCell(r) {
  const text = secondsText(r.median_secs) + (r.gpu_clock ? ` (${r.gpu_clock})` : '');
  const host = r.gpu_clock === 'graph' && (r.host_round_secs || []).length > 0
      ? `device time by graph replay; call by call (events): ${secondsText(r.host_median_secs)}`
      : '';
  return el('td', host ? {title: host} : {}, text);
}

function renderRecords(records) {
  const rows = records.slice(-MAX_RECORD_ROWS).reverse().map((r) => {
    const outcome = r.error === 'NONE' ? (r.final ? 'ok (finalist)' : 'ok') : r.error;
    return el('tr', {class: r.error === 'NONE' ? 'ok' : 'failed', title: r.message || ''},
              el('td', {}, r.id), el('td', {class: 'mono'}, r.workload), el('td', {}, r.template),
              el('td', {class: 'mono'}, JSON.stringify(r.config)), el('td', {}, outcome),
              el('td', {}, r.gflops > 0 ? `${r.gflops.toFixed(2)} ${rateUnit(r)}` : '–'),
              medianCell(r), el('td', {}, r.worker || '–'));
  });
  setRows(document.querySelector('#records tbody'), rows);
}

async function loadOverview() {
  const [jobs, workers, quarantine, fingerprints] = await Promise.all(
      [api('/api/jobs'), api('/api/workers'), api('/api/quarantine'), api('/api/fingerprints')]);
  return () => {
    renderJobs(jobs.jobs);
    renderWorkers(workers.workers);
    renderQuarantine(quarantine.entries);
    renderFingerprints(fingerprints.fingerprints);
  };
}

async function loadJob(jobId) {
  const job = await api(`/api/jobs/${jobId}`);
  // A model job's trials are its tasks' (one plot per workload); another job's are its own.
  const sources = job.tasks ? job.tasks.map((t) => ({id: t.job_id, title: t.workload}))
                            : [{id: job.job_id, title: job.workload}];
  const series = [];
  for (const source of sources) {
    series.push({key: String(source.id), title: source.title, records: await recordsOf(source.id)});
  }
  return () => {
    document.getElementById('job-title').textContent =
        `Job ${job.job_id}${job.name ? ` (${job.name})` : ''}`;
    renderSummary(job);
    renderPlots(series);
    renderRecords(series.flatMap((s) => s.records).sort((a, b) => a.id - b.id));
  };
}

// --- routing and polling --------------------------------------------------------------------

function route() {
  const match = /^#\/jobs\/(\d+)$/.exec(location.hash);
  return match ? {jobId: match[1]} : {};
}

let generation = 0;
let timer = null;

function setStatus(text, kind = '') {
  const status = document.getElementById('status');
  status.textContent = text;
  status.className = `status ${kind}`;
}

// Loopback as the browser reached it: the page itself tells whether it came in plaintext.
const LOOPBACK = /^(localhost|127(\.\d{1,3}){3}|\[::1\])$/;

// What the daemon warns about (/api/health), and what the browser sees itself before any token
// is typed: a page that came over plain HTTP from beyond loopback sends the token in the clear.
function showWarnings(fromDaemon) {
  const warnings = [...fromDaemon];
  if (location.protocol === 'http:' && !LOOPBACK.test(location.hostname)) {
    warnings.unshift('This page came over plain HTTP: a token typed here, and every job and ' +
                     'record shown, cross the network unencrypted.');
  }
  const box = document.getElementById('warnings');
  box.replaceChildren(...[...new Set(warnings)].map((text) => {
    const p = document.createElement('p');
    p.textContent = `Warning: ${text}`;
    return p;
  }));
  box.hidden = warnings.length === 0;
}

function askForToken(message) {
  const form = document.getElementById('token-form');
  form.hidden = false;
  document.getElementById('token-error').textContent = message;
  setStatus('a token is needed', 'error');
}

async function refresh() {
  const current = ++generation;
  clearTimeout(timer);
  const {jobId} = route();
  document.getElementById('overview-view').hidden = jobId !== undefined;
  document.getElementById('job-view').hidden = jobId === undefined;
  try {
    // Health first: when a token is needed, one request is refused, not every one.
    const health = await api('/api/health');
    showWarnings(health.warnings || []);
    const render = await (jobId === undefined ? loadOverview() : loadJob(jobId));
    if (current !== generation) {
      return;  // the page moved on while this poll was under way
    }
    render();
    document.getElementById('token-form').hidden = true;
    setStatus(`tune ${health.tune_version} · updated ${new Date().toLocaleTimeString()}`, 'ok');
  } catch (error) {
    if (current !== generation) {
      return;
    }
    if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
      sessionStorage.removeItem(TOKEN_KEY);
      askForToken(error.message);
      return;  // polls again once a token is given
    }
    setStatus(error instanceof ApiError ? `${error.status}: ${error.message}`
                                        : `daemon unreachable (${error.message})`, 'error');
  }
  timer = setTimeout(refresh, POLL_MS);
}

document.getElementById('token-form').addEventListener('submit', (event) => {
  event.preventDefault();
  const input = document.getElementById('token-input');
  const token = input.value.trim();
  if (token) {
    sessionStorage.setItem(TOKEN_KEY, token);
    input.value = '';
    refresh();
  }
});
window.addEventListener('hashchange', refresh);
showWarnings([]);
refresh();
