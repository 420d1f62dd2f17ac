import type { ScenarioResult } from '../scenarios/scenario.run.js';

// `service-sandbox run --junit FILE` (docs/cli.md#run): the JUnit XML that Jenkins and GitLab read. One <testsuite>
// per scenario file (name: the scenario's name, file: its path), one <testcase> per step (name: its number, id and
// caption; classname: the scenario's name), a <failure message="..."> on the failed step (or on a "given" test case
// when the given part failed), <skipped/> on the steps that did not run.

export interface FileReport {
  file: string;
  name: string;
  steps: Array<{ index: number; id: string | null; caption: string | null }>;
  /** null: the file did not run (an earlier one failed). */
  result: ScenarioResult | null;
  session: { id: string; baseUrl: string; kept: boolean } | null;
}

// XML 1.0 allows tab, newline, carriage return and the characters from U+0020 up; others are dropped.
const NOT_XML = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;

export function xmlText(value: string): string {
  return value.replace(NOT_XML, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&apos;');
}

const seconds = (ms: number) => (ms / 1000).toFixed(3);

function caseName(step: { index: number; id: string | null; caption: string | null }): string {
  return [`${step.index + 1}`, step.id, step.caption].filter(Boolean).join(' ');
}

export function junitReport(reports: readonly FileReport[]): string {
  const suites: string[] = [];
  let tests = 0;
  let failures = 0;
  let skippedTotal = 0;
  let time = 0;
  for (const report of reports) {
    const result = report.result;
    const cases: string[] = [];
    let suiteFailures = 0;
    let skipped = 0;
    const classname = xmlText(report.name);
    if (result?.failure && result.failure.step < 0) {
      suiteFailures++;
      cases.push(
        `    <testcase name="given" classname="${classname}" time="0.000">\n      <failure message="${xmlText(result.failure.message)}" type="given">${xmlText(`${report.file}:${result.failure.line}:${result.failure.column}: ${result.failure.message}`)}</failure>\n    </testcase>`,
      );
    }
    for (const step of report.steps) {
      const ran = result?.steps[step.index];
      const name = xmlText(caseName(step));
      if (!ran) {
        skipped++;
        cases.push(`    <testcase name="${name}" classname="${classname}" time="0.000">\n      <skipped/>\n    </testcase>`);
        continue;
      }
      if (ran.passed) {
        cases.push(`    <testcase name="${name}" classname="${classname}" time="${seconds(ran.durationMs)}"/>`);
        continue;
      }
      suiteFailures++;
      const failure = ran.failure!;
      const detail = [
        `${report.file}:${failure.line}:${failure.column}: ${failure.message}`,
        ...(ran.request ? [`request: ${ran.request.method} ${ran.request.path}${ran.request.body !== undefined ? ` ${JSON.stringify(ran.request.body)}` : ''}`] : []),
        ...(ran.answer ? [`answer: ${ran.answer.status} ${JSON.stringify(ran.answer.body)}`] : []),
      ].join('\n');
      cases.push(
        `    <testcase name="${name}" classname="${classname}" time="${seconds(ran.durationMs)}">\n      <failure message="${xmlText(failure.message)}" type="expectation">${xmlText(detail)}</failure>\n    </testcase>`,
      );
    }
    const count = report.steps.length + (result?.failure && result.failure.step < 0 ? 1 : 0);
    const suiteTime = result?.durationMs ?? 0;
    tests += count;
    failures += suiteFailures;
    skippedTotal += skipped;
    time += suiteTime;
    suites.push(
      `  <testsuite name="${classname}" tests="${count}" failures="${suiteFailures}" errors="0" skipped="${skipped}" time="${seconds(suiteTime)}" file="${xmlText(report.file)}">\n${cases.join('\n')}\n  </testsuite>`,
    );
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="service-sandbox run" tests="${tests}" failures="${failures}" errors="0" skipped="${skippedTotal}" time="${seconds(time)}">\n${suites.join('\n')}\n</testsuites>\n`;
}
