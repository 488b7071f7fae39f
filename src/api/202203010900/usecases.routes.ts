import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { UsecaseFields } from '../../domain/chat/usecases.service.js';
import { projectFields } from '../../http/fields.js';
import { p } from '../../http/params.js';
import { recordData } from '../../http/record-data.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { wireDateToInstant } from '../shared/time.js';
import { success } from '../../http/contract.js';
import { listing, since } from './chat.params.js';
import { ChatAreaId, LinkCount, UsecaseRecord, usecaseRecord } from './chat.shapes.js';

// ---------- `data` JSON parameters ----------

const dataText = (max = 10_000) =>
  z.preprocess((v) => (v === null ? '' : typeof v === 'number' ? String(v) : v), z.string({ error: 'must be a string' }).max(max, { error: `must be at most ${max} characters` }));
const dataNumber = (min: number, max: number, error: string) =>
  z.preprocess((v) => (typeof v === 'string' && v.trim() !== '' ? Number(v) : v), z.number({ error }).finite({ error }).min(min, { error }).max(max, { error }));
const dataDate = () => z.string().regex(/^\d{4}-\d{2}-\d{2}( \d{2}:\d{2}(:\d{2})?)?$/, { error: "must be a date as 'YYYY-MM-DD HH:MM:SS'" });

/** A use case echoed back: what the service sets itself is ignored (see usecaseRecord). */
const usecaseData = recordData(
  {
    Description: dataText().optional(),
    Welcome: dataText().optional(),
    StartDateTime: dataDate().optional(),
    FinishDateTime: dataDate().nullable().optional(),
    WordsForManual: dataText().optional(),
    WordsForAttention: dataText().optional(),
    TimeOutForAutoMsg: dataNumber(0, 7 * 24 * 3600, 'must be whole seconds from 0 (off) to 604800').pipe(z.number().int({ error: 'must be whole seconds' })).optional(),
    AutoMsg: dataText().optional(),
    ManualMessage: dataText().optional(),
    Temperature: dataNumber(0, 2, 'must be a number from 0 to 2').optional(),
    TokenBudget: dataNumber(0, 2_000_000_000, 'must be whole tokens from 0 (no limit)').pipe(z.number().int({ error: 'must be whole tokens' })).optional(),
    ModelTools: z.preprocess((v) => (typeof v === 'boolean' ? Number(v) : typeof v === 'string' ? Number(v.trim()) : v), z.union([z.literal(0), z.literal(1)], { error: 'must be 0 or 1' })).optional(),
  },
  ['Id', 'clie_Id', 'User_Id', 'Tokens', 'LastUpdDateTime', 'Hash', 'Active'],
);

function usecaseFields(d: z.output<typeof usecaseData>, tz: string): UsecaseFields {
  return {
    description: d.Description,
    welcome: d.Welcome,
    startAt: d.StartDateTime === undefined ? undefined : wireDateToInstant(d.StartDateTime, tz, 'data.StartDateTime'),
    finishAt: d.FinishDateTime === undefined || d.FinishDateTime === null ? d.FinishDateTime : wireDateToInstant(d.FinishDateTime, tz, 'data.FinishDateTime'),
    wordsForManual: d.WordsForManual,
    wordsForAttention: d.WordsForAttention,
    timeoutForAutoMsg: d.TimeOutForAutoMsg,
    autoMsg: d.AutoMsg,
    manualMessage: d.ManualMessage,
    temperature: d.Temperature,
    tokenBudget: d.TokenBudget,
    modelTools: d.ModelTools === undefined ? undefined : d.ModelTools === 1,
  };
}

// ---------- parameters ----------

// One below the integer maximum: moving Down reads the position after it.
const position = () => p.int().refine((n) => n >= 1, { error: 'must be a position from 1' }).refine((n) => n < 2_147_483_647, { error: 'is too large' });
const direction = () =>
  z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
    z.enum(['up', 'down'], { error: "must be 'Up' or 'Down'" }).transform((d) => (d === 'up' ? 'Up' : 'Down')),
  );

/** Section 4.7 (current version only): use cases, and the sentences of a use case in their order. */
export function usecasesRoutes(app: FastifyInstance, services: Services) {
  // ----- use cases -----
  defineRoute(app, {
    method: 'GET',
    url: '/usecase.php',
    auth: 'session',
    summary: "Use cases: of a user's client changed since upd_date, of one client (clie_id), or filtered with fields/where",
    params: z.object({ ...listing, user_id: p.id().optional(), upd_date: p.date().optional(), clie_id: p.id().optional() }),
    reply: z.array(UsecaseRecord),
    async handler({ params, caller }) {
      const { rows, fields } = await services.usecases.list(caller, {
        userId: params.user_id,
        changedSince: since(params.upd_date, params.tz, 'upd_date'),
        clientId: params.clie_id,
        fields: params.fields,
        where: params.where,
        tz: params.tz,
      });
      return rows.map((row) => projectFields(usecaseRecord(row, params.tz), fields));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/usecase.php',
    auth: 'session',
    summary: 'Create a use case of a client from a JSON object of its fields; answers the id',
    params: z.object({ tz: p.tz(), client_id: p.id(), data: p.json(usecaseData) }),
    reply: ChatAreaId,
    async handler({ params, caller }) {
      return services.usecases.create(caller, params.client_id, usecaseFields(params.data, params.tz));
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/usecase.php',
    auth: 'session',
    summary: 'Update a use case (data JSON), close=1 / open=1 it, or set active 0/1; LastUpdDateTime and Hash change',
    params: z.object({ tz: p.tz(), id: p.id(), data: p.json(usecaseData).optional(), close: p.int().optional(), open: p.int().optional(), active: p.flag().optional() }),
    reply: success,
    async handler({ params, caller }) {
      await services.usecases.patch(caller, params.id, {
        fields: params.data === undefined ? undefined : usecaseFields(params.data, params.tz),
        close: params.close !== undefined && params.close !== 0,
        open: params.open !== undefined && params.open !== 0,
        active: params.active === undefined ? undefined : params.active === 1,
      });
      return 'success';
    },
  });

  // ----- sentences in a use case, and their order -----
  defineRoute(app, {
    method: 'POST',
    url: '/usecase_sentence.php',
    auth: 'session',
    summary: 'Link sentences to use cases (comma-separated ids), at order_id or at the end; answers how many links were made',
    params: z.object({ tz: p.tz(), usca_id: p.idList(), sent_id: p.idList(), order_id: position().optional() }),
    reply: LinkCount,
    async handler({ params, caller }) {
      return services.usecases.linkSentences(caller, params.usca_id, params.sent_id, params.order_id);
    },
  });

  defineRoute(app, {
    method: 'DELETE',
    url: '/usecase_sentence.php',
    auth: 'session',
    summary: "Unlink sentences from use cases; tokens=1 subtracts the sentences' tokens from the use case",
    params: z.object({ tz: p.tz(), usca_id: p.idList(), sent_id: p.idList(), tokens: p.flag().default(0) }),
    reply: success,
    async handler({ params, caller }) {
      await services.usecases.unlinkSentences(caller, params.usca_id, params.sent_id, params.tokens === 1);
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/usecase_sentence.php',
    auth: 'session',
    summary: 'Move the sentence at position order_id one place Up or Down in the use case',
    params: z.object({ tz: p.tz(), usca_id: p.id(), order_id: position(), direction: direction() }),
    reply: success,
    async handler({ params, caller }) {
      await services.usecases.moveSentence(caller, params.usca_id, params.order_id, params.direction);
      return 'success';
    },
  });
}
