import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ChartFormat } from '../../domain/charts/charts.service.js';
import { p } from '../../http/params.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';

const FORMATS: readonly ChartFormat[] = ['svg', 'png', 'vega'];
const between = (min: number, max: number) => p.int().refine((v) => v >= min && v <= max, { error: `must be between ${min} and ${max}` });

const VegaLiteSpec = z.record(z.string(), z.unknown()).meta({
  description:
    'format=vega: the Vega-Lite v6 specification with its data inline (one panel per output column, stacked with vconcat; an upload of many series: a concat grid of one small panel per series and column)',
  example: { $schema: 'https://vega.github.io/schema/vega-lite/v6.json', width: 800, height: 300, data: { values: [{ x: 1, value: 3, part: 'history' }] }, layer: [] },
});

/**
 * A chart of a job's forecast, as a Vega-Lite specification, SVG or PNG (an addition beyond the spec:
 * docs/interface-notes.md, Charts of forecasts).
 */
export function chartsRoutes(app: FastifyInstance, services: Services) {
  // The drawing threads end with the app (server shutdown, tests).
  app.addHook('onClose', () => services.charts.close());
  for (const method of ['GET', 'POST'] as const) {
    defineRoute(app, {
      method,
      url: '/charts.php',
      auth: 'session',
      summary:
        "Chart of a job's latest forecast: per output column its history, the forecast, 80%/95% bands and the known/forecast boundary, titled " +
        "with the winning model's backtest error beside the best naive baseline's. format=svg (default, image/svg+xml) and png (image/png) " +
        'answer the image itself; vega the Vega-Lite specification in the envelope; errors are the envelope',
      params: z.object({
        job_id: p.id(),
        format: p
          .string(10)
          .refine((v): v is ChartFormat => (FORMATS as readonly string[]).includes(v), { error: 'must be svg, png or vega' })
          .default('svg'),
        column: p.string(1000).optional(),
        series: p.string(10_000).optional().meta({
          description:
            'Uploads of many series: which series to draw, at most 12 (default: the first 12 in the order they first appear in the upload). Series separated by commas, the values of a ' +
            'key of several columns joined with | (a backslash escapes , | and itself in a value), matched ignoring case; or positions in that order, e.g. 13..24',
          example: 'Finance,Construction',
        }),
        history: between(0, 1_000_000).default(500),
        width: between(200, 4000).default(800),
        height: between(100, 3000).default(300),
      }),
      reply: VegaLiteSpec,
      media: {
        'image/svg+xml': { schema: { type: 'string', description: 'format=svg: the SVG document' } },
        'image/png': { schema: { type: 'string', format: 'binary', description: 'format=png: the PNG image, width x (height x panels) pixels' } },
      },
      async handler({ params, caller, reply }) {
        const query = { jobId: params.job_id, column: params.column, series: params.series, history: params.history, width: params.width, height: params.height };
        const format = params.format;
        if (format === 'vega') return (await services.charts.spec(caller, query)) as unknown as Record<string, unknown>;
        const image = format === 'png' ? await services.charts.png(caller, query) : Buffer.from(await services.charts.svg(caller, query));
        // Sent here, not returned: the image is the reply, not an envelope's data (route.ts sees the reply sent).
        await reply.type(format === 'png' ? 'image/png' : 'image/svg+xml; charset=utf-8').send(image);
        return {};
      },
    });
  }
}
