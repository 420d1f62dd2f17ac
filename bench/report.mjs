#!/usr/bin/env node
// Prints bench/results.json (or the file given) as the Markdown tables used in bench/README.md.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const file = process.argv[2] ?? path.join(path.dirname(fileURLToPath(import.meta.url)), 'results.json');
const results = JSON.parse(readFileSync(file, 'utf8'));

const cell = (value) => (value === null || value === undefined ? '-' : String(value));
const table = (head, rows) =>
  [`| ${head.join(' | ')} |`, `|${head.map((_, i) => (i === 0 ? ':--' : '--:')).join('|')}|`, ...rows.map((row) => `| ${row.map(cell).join(' | ')} |`)].join('\n');

const { machine } = results;
process.stdout.write(
  `Run of ${results.startedAt} (${results.durationSeconds} s): ${machine.cpus} x ${machine.cpuModel}, Node ${machine.node}; ` +
    `load average (1/5/15 min) ${machine.loadAverageStart.join(' / ')} at the start, ${machine.loadAverageEnd.join(' / ')} at the end. ` +
    `autocannon -c ${results.settings.connections}, ${results.settings.durationSeconds} s after a ${results.settings.warmupSeconds} s warm-up; ` +
    `ceiling: ${results.ceilingRuns.join(', ')} req/s in its ${results.ceilingRuns.length} runs; each ratio uses the ceiling runs on either side of its scenario.\n\n`,
);
process.stdout.write(
  `${table(
    ['scenario', 'req/s', 'p50 ms', 'p99 ms', '× ceiling (ceiling req/s)', 'non-2xx', 'peak RSS MB', 'load (1 min) before'],
    results.scenarios.map((s) => [
      s.name,
      s.requestsPerSecond,
      s.latencyP50Ms,
      s.latencyP99Ms,
      s.ceiling ? '-' : `${s.ratioToCeiling?.toFixed(3)} (${s.ceilingUsed})`,
      s.non2xx,
      s.peakRssMb,
      s.loadAverageBefore?.[0],
    ]),
  )}\n\n`,
);
const sync = results.changeSync;
const pdf = results.statements.pdf;
const csv = results.statements.csv;
const rows = [
  ['1,000,000-row list vs Prism (same request, back to back)', results.prism?.requestsPerSecond ? `${results.ratioOfListAt1mToPrism} × Prism's req/s (Prism: ${results.prism.requestsPerSecond} req/s)` : 'not measured'],
  ['Mockoon CLI on the same request', results.mockoon?.requestsPerSecond ? `${results.mockoon.requestsPerSecond} req/s (status ${results.mockoon.status}, ${results.mockoon.bytesOfFirstResponse} bytes)` : 'not measured'],
  ['change sync, 100,000 transactions', `${sync.totalMs} ms, ${sync.requests} requests of ${sync.pageSize} (${sync.pinnedInstants} pinned instants), every transaction seen: ${sync.exactlyOnce}`],
  ['cold start to first answer (in-memory)', `${results.coldStart.medianMs} ms median of ${results.coldStart.runs} (runs: ${results.coldStart.runsMs.join(', ')}), RSS ${results.coldStart.peakRssMb} MB${results.coldStart.ceilingMedianMs === undefined ? '' : `; start-up ceiling ${results.coldStart.ceilingMedianMs} ms (runs: ${results.coldStart.ceilingRunsMs.join(', ')}), ${results.coldStart.ratioToCeiling}x`}`],
  ['cold start to first answer (1,000,000-row file)', `${results.coldStart1m.medianMs} ms median of ${results.coldStart1m.runs}`],
  ['`POST /_emulator/reset`', `${results.reset.medianMs} ms median of ${results.reset.runs} (p90 ${results.reset.p90Ms}, max ${results.reset.maxMs}; server-reported ${results.reset.serverReportedMedianMs})`],
  ...(results.sessions
    ? [
        [
          '`POST /_emulator/sessions`',
          `${results.sessions.pooled.medianMs} ms median (p90 ${results.sessions.pooled.p90Ms}) one at a time; ${results.sessions.fromSnapshot.medianMs} ms from a snapshot; ${results.sessions.ownClock.medianMs} ms with its own clock; 16 at once ${results.sessions.burst16Ms} ms; ${results.sessions.idleMbPerSession} MB RSS per idle session` +
            // bench/README.md: the floors the default create takes turns with (runs since 2026-11-28)
            (results.sessions.floors ? `; floors: the same POST refused ${results.sessions.floors.refusedMedianMs} ms, a bare node:http server ${results.sessions.floors.bareNodeMedianMs} ms` : ''),
        ],
      ]
    : []),
  ...(results.pythonKitLife
    ? [
        [
          "one test's life, Python kit",
          results.pythonKitLife.skipped
            ? `not measured (${results.pythonKitLife.skipped})`
            : `${results.pythonKitLife.medianMs} ms median of ${results.pythonKitLife.runs} (p90 ${results.pythonKitLife.p90Ms}; create ${results.pythonKitLife.steps.createSessionMs}, ${results.pythonKitLife.journeyRequests} requests ${results.pythonKitLife.steps.journeyMs} (the first ${results.pythonKitLife.firstRequestMs}), end ${results.pythonKitLife.steps.endMs} ms)`,
        ],
      ]
    : []),
  ['test kit `startSandbox()`', `${results.testkit.medianStartMs} ms median (first call ${results.testkit.firstStartMs} ms; package import ${results.testkit.importMs} ms; close ${results.testkit.medianCloseMs} ms)`],
  ['PDF statement, 10,000 entries', `${Math.round(pdf.httpRequestMs)} ms per request (renderer alone ${Math.round(pdf.renderWallMs)} ms wall, ${Math.round(pdf.renderCpuMs)} ms CPU), ${pdf.pages} pages, ${pdf.bytes} bytes`],
  ['CSV statement, 10,000 entries', `${Math.round(csv.httpRequestMs)} ms per request (renderer alone ${Math.round(csv.renderWallMs)} ms), ${csv.bytes} bytes`],
  ['seeding (last build)', results.seed.secondsTotal ? `${results.seed.secondsTotal} s for both databases (built ${results.seed.builtAt})` : '-'],
];
process.stdout.write(`${table(['measurement', 'result'], rows)}\n\n`);
// The targets table (docs/benchmarks.md#targets): "met", the measured gap, or "not measured".
process.stdout.write(
  `${table(
    ['scenario', 'target', 'measured', 'result'],
    results.targets.map((t) => [t.scenario ?? t.target, t.scenario ? t.target : '', t.measured, t.result ?? (t.met ? 'met' : '**gap**')]),
  )}\n`,
);
