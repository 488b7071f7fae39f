import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { buildApp } from '../../src/app.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { refreshJobGauges, type Runtime } from '../../src/runtime.js';
import { CURRENT, createTestContext, form, type TestContext } from '../support/helper.js';

/**
 * The operators' Grafana dashboard and Prometheus alert rules (deploy/) name only metrics that
 * /metrics of a built app exposes: a renamed or removed instrument breaks this test, not a dashboard in
 * production. Names are read out of every PromQL expression.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dashboard = JSON.parse(readFileSync(path.join(ROOT, 'deploy/grafana/dashboard.json'), 'utf8'));
const alerts = parseYaml(readFileSync(path.join(ROOT, 'deploy/prometheus/alerts.yml'), 'utf8'));

const PROMQL_WORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'bool', 'and', 'or', 'unless', 'offset', 'atan2', 'inf', 'nan']);

/**
 * Metric names in a PromQL expression: what is left once strings, label matchers, ranges, grouping label
 * lists, Grafana variables, numbers, keywords and function names (an identifier before "(") are removed.
 */
export function metricNames(expr: string): string[] {
  const bare = expr
    .replace(/"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`/g, '""')
    .replace(/\{[^}]*\}/g, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\$\{?\w+\}?/g, ' ');
  const names = new Set<string>();
  for (const match of bare.matchAll(/(?<![\w:.])([A-Za-z_:][\w:]*)(\s*\()?/g)) {
    const [, name, call] = match;
    if (call || PROMQL_WORDS.has(name!.toLowerCase())) continue;
    names.add(name!);
  }
  return [...names];
}

/** Every target expression of every panel (rows included), with the panel's title. */
function dashboardExpressions(board: any): { where: string; expr: string }[] {
  const panels = (board.panels as any[]).flatMap((p) => [p, ...(p.panels ?? [])]);
  return panels.flatMap((p) => (p.targets ?? []).map((t: any) => ({ where: `panel "${p.title}"`, expr: String(t.expr) })));
}

function alertExpressions(rules: any): { where: string; expr: string }[] {
  return (rules.groups as any[]).flatMap((g) => (g.rules as any[]).map((r) => ({ where: `alert ${r.alert}`, expr: String(r.expr) })));
}

/** Names the exposition declares (# TYPE lines), histograms with their _bucket, _sum and _count series. */
function exposedNames(text: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name!);
    if (type === 'histogram' || type === 'summary') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}

function unknownMetrics(expressions: { where: string; expr: string }[], exposed: Set<string>): string[] {
  return expressions.flatMap(({ where, expr }) => metricNames(expr).filter((n) => !exposed.has(n)).map((n) => `${where}: ${n}`));
}

let ctx: TestContext;
let exposed: Set<string>;
beforeAll(async () => {
  ctx = await createTestContext();
  exposed = exposedNames((await ctx.app.inject({ method: 'GET', url: '/metrics' })).body);
});
afterAll(async () => {
  await ctx?.close();
});

describe('metric names in PromQL', () => {
  it('are found through functions, aggregations, matchers, ranges and Grafana variables', () => {
    expect(
      metricNames('histogram_quantile(0.95, sum by (le, resource) (rate(mtcs_http_request_duration_seconds_bucket{code!="x",a=~"b|c"}[$__rate_interval])))'),
    ).toEqual(['mtcs_http_request_duration_seconds_bucket']);
    expect(metricNames('max(a_total) > 0 and on() (sum(increase(b_total[30m])) or on() vector(0)) == 0').sort()).toEqual(['a_total', 'b_total']);
    expect(metricNames('sum(rate(x_sum[5m])) / sum(rate(x_count[5m] offset 1h)) > bool 0.5')).toEqual(['x_sum', 'x_count']);
  });

  it('a panel naming a metric the service does not expose is reported', () => {
    const broken = { panels: [{ title: 'Typo', targets: [{ expr: 'sum(rate(mtcs_http_request_total[5m]))' }] }] };
    expect(unknownMetrics(dashboardExpressions(broken), exposed)).toEqual(['panel "Typo": mtcs_http_request_total']);
  });
});

describe('Grafana dashboard (deploy/grafana/dashboard.json)', () => {
  it('names only metrics that /metrics exposes', () => {
    const expressions = dashboardExpressions(dashboard);
    expect(expressions.length).toBeGreaterThanOrEqual(10);
    expect(unknownMetrics(expressions, exposed)).toEqual([]);
  });

  it('covers requests, latency, envelope errors, queue depth and age, jobs, training time and LLM tokens', () => {
    const used = new Set(dashboardExpressions(dashboard).flatMap(({ expr }) => metricNames(expr)));
    for (const name of [
      'mtcs_http_requests_total',
      'mtcs_http_request_duration_seconds_bucket',
      'mtcs_envelope_errors_total',
      'mtcs_queue_depth',
      'mtcs_queue_oldest_pending_seconds',
      'mtcs_jobs',
      'mtcs_job_parts',
      'mtcs_trainings_total',
      'mtcs_training_duration_seconds_bucket',
      'mtcs_llm_tokens_total',
    ]) {
      expect(used, name).toContain(name);
    }
  });

  it('reads every panel from the Prometheus datasource variable, with unique panel ids', () => {
    const variable = dashboard.templating.list.find((v: any) => v.type === 'datasource');
    expect(variable).toMatchObject({ name: 'datasource', query: 'prometheus' });
    const panels = (dashboard.panels as any[]).filter((p) => p.type !== 'row');
    for (const p of panels) {
      expect(p.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      for (const t of p.targets) expect(t.datasource, p.title).toEqual({ type: 'prometheus', uid: '${datasource}' });
      expect(p.gridPos, p.title).toMatchObject({ w: expect.any(Number), h: expect.any(Number) });
    }
    const ids = (dashboard.panels as any[]).map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
  });
});

describe('Prometheus alert rules (deploy/prometheus/alerts.yml)', () => {
  it('alert on a stuck queue and on failing jobs, each with a duration, severity and summary', () => {
    const rules = (alerts.groups as any[]).flatMap((g) => g.rules as any[]);
    expect(rules.map((r) => r.alert)).toEqual(expect.arrayContaining(['MtcsQueueStuck', 'MtcsJobsFailing']));
    for (const r of rules) {
      expect(r, r.alert).toMatchObject({ expr: expect.any(String), for: expect.stringMatching(/^\d+[smh]$/), labels: { severity: expect.stringMatching(/^(warning|critical)$/) } });
      expect(r.annotations.summary, r.alert).toEqual(expect.any(String));
    }
  });

  it('name only metrics that /metrics exposes', () => {
    expect(unknownMetrics(alertExpressions(alerts), exposed)).toEqual([]);
  });
});

describe('queue age gauge', () => {
  it('is the wait of the oldest Pending job, refreshed at each scrape, and 0 with an empty queue', async () => {
    const metrics = createMetrics({ defaults: false });
    const app = await buildApp({ config: ctx.config, services: ctx.services, logger: pino({ level: 'silent' }), metrics, beforeScrape: () => refreshJobGauges({ services: ctx.services } as Runtime, metrics) });
    const gauge = async () => {
      const text = (await app.inject({ method: 'GET', url: '/metrics' })).body;
      return { age: Number(/^mtcs_queue_oldest_pending_seconds (\S+)$/m.exec(text)?.[1]), depth: Number(/^mtcs_queue_depth (\S+)$/m.exec(text)?.[1]) };
    };
    try {
      expect(await gauge()).toEqual({ age: 0, depth: 0 });
      const admin = await ctx.createUser({ role: 'admin' });
      const ids: number[] = [];
      for (const minutesAgo of [12, 3]) {
        const created = await ctx.request({ method: 'POST', url: `${CURRENT}/jobs.php`, ...form({ session: admin.session, tz: 'Europe/Madrid', app_name: 'forecast', newTraining: 1 }) });
        expect(created.envelope.status, JSON.stringify(created.envelope)).toBe(0);
        const id = Number(created.envelope.data.job_id);
        ids.push(id);
        await ctx.database.db
          .updateTable('jobs')
          .set({ status: 1, updated_at: sql<Date>`now() - make_interval(mins => ${minutesAgo})` })
          .where('id', '=', id)
          .execute();
      }
      const { age, depth } = await gauge();
      expect(depth).toBe(2);
      expect(age).toBeGreaterThanOrEqual(12 * 60);
      expect(age).toBeLessThan(13 * 60);
      await ctx.database.db.updateTable('jobs').set({ status: 5 }).where('id', 'in', ids).execute();
      expect(await gauge()).toEqual({ age: 0, depth: 0 });
    } finally {
      await app.close();
    }
  });
});
