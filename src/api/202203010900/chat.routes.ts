import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { projectFields } from '../../http/fields.js';
import { p } from '../../http/params.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { wireDateToInstant } from '../shared/time.js';
import { success } from '../../http/contract.js';
import { listing, since } from './chat.params.js';
import { ChatAreaId, ChatRecord, HandoffReport, chatRecord } from './chat.shapes.js';

// ---------- parameters ----------

const control = () =>
  z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
    z.enum(['auto', 'manual'], { error: "must be 'auto' or 'manual'" }),
  );
/** `user` of PATCH /chat: the operator's id, or empty/0 to release the chat. */
const managingUser = () =>
  z.preprocess(
    (v) => (v === undefined ? undefined : v === '' || v === '0' || v === 0 || v === null ? null : typeof v === 'string' && /^\d+$/.test(v.trim()) ? Number(v) : v),
    z.number({ error: 'must be a user id' }).int().min(1).max(2_147_483_647).nullable().optional(),
  );

/** Section 4.7 (current version only): chats, the ratings of their sentences, and their hand-offs to an operator. */
export function chatRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'GET',
    url: '/chat.php',
    auth: 'session',
    summary: 'Chats of your client (every chat for administrators), by user_id, hash, upd_date, chat_id list, or fields/where',
    params: z.object({ ...listing, user_id: p.id().optional(), hash: p.string(255).optional(), upd_date: p.date().optional(), chat_id: p.idList().optional() }),
    reply: z.array(ChatRecord),
    async handler({ params, caller }) {
      const { rows, fields } = await services.chat.list(caller, {
        userId: params.user_id,
        hash: params.hash,
        changedSince: since(params.upd_date, params.tz, 'upd_date'),
        chatIds: params.chat_id,
        fields: params.fields,
        where: params.where,
        tz: params.tz,
      });
      return rows.map((row) => projectFields(chatRecord(row, params.tz), fields));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/chat.php',
    auth: 'session',
    summary: "Start a chat on an open use case; its Welcome is the first assistant sentence. Answers the id",
    params: z.object({ tz: p.tz(), usca_id: p.id(), user_id: p.id(), hash: p.string(255).optional() }),
    reply: ChatAreaId,
    async handler({ params, caller }) {
      return services.chat.create(caller, { usecaseId: params.usca_id, userId: params.user_id, hash: params.hash });
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/chat.php',
    auth: 'session',
    summary: 'Finish a chat, set its status, control type (auto/manual), operator (user), add tokens, or set active 0/1; answers success',
    params: z.object({
      tz: p.tz(),
      id: p.id(),
      finish: p.flag().default(0),
      status: p.text(100).optional(),
      control: control().optional(),
      user: managingUser(),
      tokens: p.int().default(0),
      active: p.flag().optional(),
    }),
    reply: success,
    async handler({ params, caller }) {
      await services.chat.patch(caller, params.id, {
        finish: params.finish === 1,
        status: params.status,
        control: params.control,
        managingUserId: params.user,
        tokens: params.tokens,
        active: params.active === undefined ? undefined : params.active === 1,
      });
      return 'success';
    },
  });

  defineRoute(app, {
    method: 'GET',
    url: '/handoffs.php',
    auth: 'admin',
    summary:
      'Addition: hand-offs per use case (administrators): counts by reason (word, operator, timeout, budget) and by event (manual, attention, auto_message), and the share that followed an answer rated bad',
    params: z.object({ tz: p.tz(), usca_id: p.idList().optional(), date_from: p.date().optional(), date_to: p.date().optional() }),
    reply: z.array(HandoffReport),
    async handler({ params, caller }) {
      const rows = await services.chat.handoffReport(caller, {
        usecaseIds: params.usca_id,
        from: params.date_from === undefined ? undefined : wireDateToInstant(params.date_from, params.tz, 'date_from'),
        before: params.date_to === undefined ? undefined : wireDateToInstant(params.date_to, params.tz, 'date_to', 'to'),
      });
      const report = new Map<number, { usca_Id: number; Description: string; Handoffs: number; ByReason: Record<string, number>; ByEvent: Record<string, number>; AfterBadAnswer: number; AfterBadAnswerShare: number }>();
      for (const row of rows) {
        let entry = report.get(row.usecase_id);
        if (!entry) {
          entry = {
            usca_Id: row.usecase_id,
            Description: row.description,
            Handoffs: 0,
            ByReason: { word: 0, operator: 0, timeout: 0, budget: 0 },
            ByEvent: { manual: 0, attention: 0, auto_message: 0 },
            AfterBadAnswer: 0,
            AfterBadAnswerShare: 0,
          };
          report.set(row.usecase_id, entry);
        }
        entry.Handoffs += row.total;
        entry.ByReason[row.reason] = (entry.ByReason[row.reason] ?? 0) + row.total;
        entry.ByEvent[row.event] = (entry.ByEvent[row.event] ?? 0) + row.total;
        entry.AfterBadAnswer += row.after_bad_answer;
      }
      return [...report.values()].map((e) => ({ ...e, AfterBadAnswerShare: e.Handoffs === 0 ? 0 : Math.round((e.AfterBadAnswer / e.Handoffs) * 10_000) / 10_000 }));
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/chat-sentence.php',
    auth: 'session',
    summary: 'Rate a sentence of a chat: 0 bad, 1 good',
    params: z.object({ tz: p.tz(), chat_id: p.id(), sent_id: p.id(), rate: p.flag() }),
    reply: success,
    async handler({ params, caller }) {
      await services.chat.rate(caller, params.chat_id, params.sent_id, params.rate);
      return 'success';
    },
  });
}
