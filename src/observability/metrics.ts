import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus instruments of one process. Each process (API or worker) has its own registry: a scrape
 * of /metrics shows that process; Prometheus sums across replicas.
 */
export function createMetrics(options: { defaults?: boolean } = {}) {
  const registry = new Registry();
  if (options.defaults !== false) collectDefaultMetrics({ register: registry });
  const labelsHttp = ['version', 'resource', 'method'] as const;
  const metrics = {
    registry,
    httpRequests: new Counter({ name: 'mtcs_http_requests_total', help: 'HTTP requests by API version, resource and method', labelNames: [...labelsHttp, 'status'], registers: [registry] }),
    httpDuration: new Histogram({
      name: 'mtcs_http_request_duration_seconds',
      help: 'HTTP request latency',
      labelNames: labelsHttp,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
      registers: [registry],
    }),
    envelopeErrors: new Counter({ name: 'mtcs_envelope_errors_total', help: 'Replies with envelope status 1, by resource and error code', labelNames: ['version', 'resource', 'code'], registers: [registry] }),
    queueDepth: new Gauge({ name: 'mtcs_queue_depth', help: 'Jobs waiting to be trained (status Pending)', registers: [registry] }),
    queueAge: new Gauge({ name: 'mtcs_queue_oldest_pending_seconds', help: 'Age of the oldest Pending job (since it was queued); 0 when none waits', registers: [registry] }),
    jobsByStatus: new Gauge({ name: 'mtcs_jobs', help: 'Jobs by status code', labelNames: ['status'], registers: [registry] }),
    jobParts: new Gauge({ name: 'mtcs_job_parts', help: 'Units of jobs in parts (global rounds, groups of series scored, the choice across series, groups refitted) by state: queued, running, done', labelNames: ['state'], registers: [registry] }),
    trainingDuration: new Histogram({
      name: 'mtcs_training_duration_seconds',
      help: 'Wall time of finished trainings',
      buckets: [0.5, 1, 2, 5, 10, 30, 60, 120, 300, 900, 3600],
      registers: [registry],
    }),
    trainingsTotal: new Counter({ name: 'mtcs_trainings_total', help: 'Trainings run by this process, by outcome', labelNames: ['outcome'], registers: [registry] }),
    llmCalls: new Counter({ name: 'mtcs_llm_calls_total', help: 'Calls to the LLM provider by outcome', labelNames: ['outcome'], registers: [registry] }),
    llmTokens: new Counter({ name: 'mtcs_llm_tokens_total', help: 'Tokens reported by the LLM provider', labelNames: ['kind'], registers: [registry] }),
  };
  return metrics;
}

export type Metrics = ReturnType<typeof createMetrics>;
