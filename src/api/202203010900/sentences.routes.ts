import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { projectFields } from '../../http/fields.js';
import { p } from '../../http/params.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { success } from '../../http/contract.js';
import { listing } from './chat.params.js';
import { ChatAreaId, SentenceRecord, chatSentenceRecord, sentenceRecord, usecaseSentenceRecord } from './chat.shapes.js';

const role = () => p.int().refine((n) => n >= 0 && n <= 2, { error: 'must be 0 (system), 1 (user) or 2 (assistant)' }).transform((n) => n as 0 | 1 | 2);

/** Section 4.7 (current version only): sentences, said in a chat, kept in a use case, or free. */
export function sentencesRoutes(app: FastifyInstance, services: Services) {
  defineRoute(app, {
    method: 'GET',
    url: '/sentence.php',
    auth: 'session',
    summary: "A chat's sentences in order (chat_id), a use case's in prompt order (usca_id), or your client's filtered with fields/where",
    params: z.object({ ...listing, chat_id: p.id().optional(), usca_id: p.id().optional() }),
    reply: z.array(SentenceRecord),
    async handler({ params, caller }) {
      const query = { fields: params.fields, where: params.where, tz: params.tz };
      if (params.chat_id !== undefined) {
        const { rows, fields } = await services.chat.sentencesOf(caller, params.chat_id, query);
        return rows.map((row) => projectFields(chatSentenceRecord(row, params.tz), fields));
      }
      if (params.usca_id !== undefined) {
        const { rows, fields } = await services.sentences.listForUsecase(caller, params.usca_id, query);
        return rows.map((row) => projectFields(usecaseSentenceRecord(row, params.tz), fields));
      }
      const { rows, fields } = await services.sentences.list(caller, query);
      return rows.map((row) => projectFields(sentenceRecord(row, params.tz), fields));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/sentence.php',
    auth: 'session',
    summary:
      'A sentence: said in a chat (chat_id, role; a user sentence in an automatic chat gets the reply before this returns), appended to a use case (usca_id, tokens=1 adds its tokens), or free. Answers its id',
    params: z.object({
      tz: p.tz(),
      text: p.string(20_000),
      chat_id: p.id().optional(),
      usca_id: p.id().optional(),
      user_id: p.id().optional(),
      role: role().default(0),
      rate: p.flag().default(1),
      tokens: p.flag().default(0),
    }),
    reply: ChatAreaId,
    async handler({ params, caller }) {
      if (params.chat_id !== undefined) {
        return services.chat.say(caller, { chatId: params.chat_id, text: params.text, role: params.role, rate: params.rate, userId: params.user_id });
      }
      return services.sentences.create(caller, { text: params.text, usecaseId: params.usca_id, addTokens: params.tokens === 1 });
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/sentence.php',
    auth: 'session',
    summary: "Change a sentence's text (its token count follows)",
    params: z.object({ tz: p.tz(), id: p.id(), new_text: p.string(20_000) }),
    reply: success,
    async handler({ params, caller }) {
      await services.sentences.patchText(caller, params.id, params.new_text);
      return 'success';
    },
  });
}
