import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { Errors } from '../../domain/errors.js';
import { p } from '../../http/params.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { success } from '../../http/contract.js';

/** Parameters that are not data columns. */
const RESERVED = new Set(['session', 'tz', 'job_id', 'training_id']);
const MAX_CELL = 1000;

/** Every other posted field is a `{column-name}` cell. */
function cellsOf(params: Record<string, unknown>): Record<string, string> {
  const cells: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    if (RESERVED.has(name)) continue;
    if (typeof value !== 'string' && typeof value !== 'number') throw Errors.invalidParameter(name, 'must be a single value');
    const text = String(value);
    if (text.length > MAX_CELL) throw Errors.invalidParameter(name, `must be at most ${MAX_CELL} characters`);
    cells[name] = text;
  }
  return cells;
}

/** Older version (spec 9): POST /forecasts.php predicts one row with a job's stored network. */
export function forecastsRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'POST',
    url: '/forecasts.php',
    auth: 'session',
    summary:
      "Predict the output columns for the posted {column-name} values with the network of job_id (or training_id's, or the caller's newest finished job); the row is kept as a new output of the job",
    params: z.looseObject({ tz: p.tz(), job_id: p.id().optional(), training_id: p.id().optional() }),
    reply: success,
    async handler({ params, caller }) {
      await services.forecasts.forecast(caller, { jobId: params.job_id, trainingId: params.training_id, cells: cellsOf(params) });
      return 'success';
    },
  });
}
