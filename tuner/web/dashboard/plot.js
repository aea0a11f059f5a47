// The convergence plot of one workload: the best GFLOPS so far against the trials recorded,
// drawn as inline SVG. One point per successful trial (at the best so far when it was
// recorded); the line steps up where a trial beat the best.

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 640;
const HEIGHT = 260;
const MARGIN = {left: 56, right: 16, top: 24, bottom: 40};

function svgElement(name, attributes = {}, text = null) {
  const element = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) {
    element.setAttribute(key, String(value));
  }
  if (text !== null) {
    element.textContent = text;
  }
  return element;
}

// About `count` round tick values from 0 to `max`.
function ticks(max, count) {
  if (max <= 0) {
    return [0];
  }
  const raw = max / count;
  const magnitude = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map((m) => m * magnitude).find((s) => s >= raw);
  const values = [];
  for (let v = 0; v <= max + step / 2; v += step) {
    values.push(Number(v.toPrecision(12)));
  }
  return values;
}

// The trials of `records` (a job's records in the order they were recorded; finalists'
// re-measurements are no trials) as [{trial, gflops, best, record}] for the successful ones.
export function convergencePoints(records) {
  const points = [];
  let trial = 0;
  let best = 0;
  for (const record of records) {
    if (record.final) {
      continue;
    }
    trial += 1;
    if (record.error === 'NONE' && record.gflops > 0) {
      best = Math.max(best, record.gflops);
      points.push({trial, gflops: record.gflops, best, record});
    }
  }
  return {trials: trial, points};
}

// An <svg class="convergence"> with one <circle class="point"> per successful trial.
export function convergencePlot(title, records) {
  const {trials, points} = convergencePoints(records);
  const svg = svgElement('svg', {
    class: 'convergence',
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    role: 'img',
    'aria-label': `${title}: best GFLOPS so far against trials`,
  });
  svg.dataset.points = String(points.length);
  svg.appendChild(svgElement('text', {x: MARGIN.left, y: 16, class: 'plot-title'}, title));

  const plotWidth = WIDTH - MARGIN.left - MARGIN.right;
  const plotHeight = HEIGHT - MARGIN.top - MARGIN.bottom;
  const xMax = Math.max(trials, 1);
  const yTop = Math.max(...points.map((p) => p.best), 0) * 1.1 || 1;
  const x = (trial) => MARGIN.left + (xMax === 1 ? plotWidth / 2 : ((trial - 1) / (xMax - 1)) * plotWidth);
  const y = (gflops) => MARGIN.top + plotHeight - (gflops / yTop) * plotHeight;

  const axes = svgElement('g', {class: 'axes'});
  for (const value of ticks(yTop, 4)) {
    if (value > yTop) {
      continue;
    }
    axes.appendChild(svgElement('line', {
      x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: y(value), y2: y(value), class: 'grid-line',
    }));
    axes.appendChild(svgElement('text', {x: MARGIN.left - 6, y: y(value) + 4, class: 'tick y'},
                                String(value)));
  }
  for (const value of ticks(xMax, 6)) {
    if (value < 1 || value > xMax) {
      continue;
    }
    axes.appendChild(svgElement('text', {x: x(value), y: HEIGHT - MARGIN.bottom + 16, class: 'tick x'},
                                String(value)));
  }
  axes.appendChild(svgElement('line', {
    x1: MARGIN.left, x2: MARGIN.left, y1: MARGIN.top, y2: MARGIN.top + plotHeight, class: 'axis',
  }));
  axes.appendChild(svgElement('line', {
    x1: MARGIN.left, x2: WIDTH - MARGIN.right, y1: MARGIN.top + plotHeight,
    y2: MARGIN.top + plotHeight, class: 'axis',
  }));
  axes.appendChild(svgElement('text', {x: MARGIN.left + plotWidth / 2, y: HEIGHT - 6, class: 'label'},
                              'trials'));
  axes.appendChild(svgElement('text', {
    x: 14, y: MARGIN.top + plotHeight / 2, class: 'label',
    transform: `rotate(-90 14 ${MARGIN.top + plotHeight / 2})`,
  }, 'best GFLOPS'));
  svg.appendChild(axes);

  if (points.length > 0) {
    // Steps: flat until the next improvement, then up; on to the last trial.
    const path = [`M ${x(points[0].trial)} ${y(points[0].best)}`];
    for (const p of points.slice(1)) {
      path.push(`H ${x(p.trial)}`, `V ${y(p.best)}`);
    }
    path.push(`H ${x(xMax)}`);
    svg.appendChild(svgElement('path', {d: path.join(' '), class: 'best-line'}));
  }
  const dots = svgElement('g', {class: 'points'});
  for (const p of points) {
    const circle = svgElement('circle', {
      cx: x(p.trial), cy: y(p.best), r: 3,
      class: p.gflops >= p.best ? 'point improved' : 'point',
    });
    circle.appendChild(svgElement('title', {},
        `trial ${p.trial}: ${p.gflops.toFixed(2)} GFLOPS (best so far ${p.best.toFixed(2)})\n` +
        `${p.record.template} ${JSON.stringify(p.record.config)}`));
    dots.appendChild(circle);
  }
  svg.appendChild(dots);
  return svg;
}
