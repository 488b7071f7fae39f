import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import type { Caller } from '../../domain/caller.js';
import type { ClientDetails } from '../../domain/chat/clients.service.js';
import { DEFAULT_PROMPT_MAX_TOKENS, parsePrompt } from '../../domain/chat/prompts.service.js';
import type { UsecaseFields } from '../../domain/chat/usecases.service.js';
import { Errors } from '../../domain/errors.js';
import { projectFields } from '../../http/fields.js';
import { p } from '../../http/params.js';
import { recordData } from '../../http/record-data.js';
import { eventStream } from '../../http/sse.js';
import { defineRoute } from '../../http/route.js';
import type { Services } from '../../services.js';
import { wireDateToInstant } from '../shared/time.js';
import { success } from '../../http/contract.js';
import {
  ChatAreaId,
  ChatRecord,
  ClientRecord,
  HandoffReport,
  LinkCount,
  PromptReply,
  PromptStream,
  SentenceRecord,
  UsecaseRecord,
  chatRecord,
  chatSentenceRecord,
  clientRecord,
  sentenceRecord,
  usecaseRecord,
  usecaseSentenceRecord,
} from './chat.shapes.js';

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

/** Client fields may be null (spec section 2): an echoed null stays null. */
const clientText = () =>
  z.preprocess((v) => (typeof v === 'number' ? String(v) : v), z.string({ error: 'must be a string or null' }).max(500, { error: 'must be at most 500 characters' }).nullable()).optional();
/** A client echoed back: its id and the masked provider key (set only through provider_key) are ignored. */
const clientData = recordData(
  {
    FiscalId: clientText(),
    CompanyName: clientText(),
    CompanyLegalName: clientText(),
    CompanyAddress1: clientText(),
    CompanyAddress2: clientText(),
    CompanyAddress3: clientText(),
    CompanyCity: clientText(),
    CompanyZipCode: clientText(),
  },
  ['Id', 'CompanyProviderKey'],
);

function clientDetails(d: z.output<typeof clientData> | undefined): ClientDetails | undefined {
  if (d === undefined) return undefined;
  return {
    fiscalId: d.FiscalId,
    companyName: d.CompanyName,
    companyLegalName: d.CompanyLegalName,
    companyAddress1: d.CompanyAddress1,
    companyAddress2: d.CompanyAddress2,
    companyAddress3: d.CompanyAddress3,
    companyCity: d.CompanyCity,
    companyZipCode: d.CompanyZipCode,
  };
}

// ---------- parameters ----------

const listing = { tz: p.tz(), fields: p.string(2000).optional(), where: p.string(2000).optional() };
const role = () => p.int().refine((n) => n >= 0 && n <= 2, { error: 'must be 0 (system), 1 (user) or 2 (assistant)' }).transform((n) => n as 0 | 1 | 2);
// One below the integer maximum: moving Down reads the position after it.
const position = () => p.int().refine((n) => n >= 1, { error: 'must be a position from 1' }).refine((n) => n < 2_147_483_647, { error: 'is too large' });
const direction = () =>
  z.preprocess(
    (v) => (typeof v === 'string' ? v.trim().toLowerCase() : v),
    z.enum(['up', 'down'], { error: "must be 'Up' or 'Down'" }).transform((d) => (d === 'up' ? 'Up' : 'Down')),
  );
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

const since = (text: string | undefined, tz: string, parameter: string) => (text === undefined ? undefined : wireDateToInstant(text, tz, parameter));

// ---------- /aichat server-sent events ----------

/**
 * Streams the reply as server-sent events; the response starts with the first piece of text, so a
 * failure before that still answers the ordinary error envelope.
 */
async function streamPrompt(services: Services, caller: Caller, request: FastifyRequest, reply: FastifyReply, prompt: ReturnType<typeof parsePrompt>, maxTokens: number) {
  const stream = eventStream(request, reply);
  try {
    const result = await services.prompts.stream(caller, prompt, maxTokens, (text) => stream.send('delta', { text }), stream.signal);
    stream.done(result.text, { usage: result.usage });
  } catch (error) {
    if (!stream.started) throw error;
    stream.fail(error);
  }
  return undefined;
}

/** Section 4.7 (current version only): clients, use cases, sentences, chats, ratings and prompts. */
export function chatRoutes(app: FastifyInstance, services: Services) {
  // ----- clients -----
  defineRoute(app, {
    method: 'GET',
    url: '/client.php',
    auth: 'session',
    summary: 'Clients: every client for administrators, your own otherwise; CompanyProviderKey masked for administrators, null otherwise',
    params: z.object(listing),
    reply: z.array(ClientRecord),
    async handler({ params, caller }) {
      const { rows, fields } = await services.clients.list(caller, params);
      return rows.map((row) => projectFields(clientRecord(row, caller), fields));
    },
  });

  defineRoute(app, {
    method: 'POST',
    url: '/client.php',
    auth: 'session',
    summary: 'Create a client with its provider key (stored encrypted); a user without a client becomes its member. Answers the id',
    params: z.object({ tz: p.tz(), provider_key: p.string(500), data: p.json(clientData, 10_000).optional() }),
    reply: ChatAreaId,
    async handler({ params, caller }) {
      return services.clients.create(caller, { providerKey: params.provider_key, details: clientDetails(params.data) });
    },
  });

  defineRoute(app, {
    method: 'PATCH',
    url: '/client.php',
    auth: 'session',
    summary: 'Update a client (data, provider_key); administrators attach a user with user_id, or detach it with user_id and detach=1',
    params: z.object({
      tz: p.tz(),
      id: p.id(),
      data: p.json(clientData, 10_000).optional(),
      provider_key: p.string(500).optional(),
      user_id: p.id().optional(),
      detach: p.flag().optional(),
    }),
    reply: success,
    async handler({ params, caller }) {
      if (params.detach === 1 && params.user_id === undefined) throw Errors.missingParameter('user_id');
      await services.clients.patch(caller, params.id, {
        details: clientDetails(params.data),
        providerKey: params.provider_key,
        attachUserId: params.detach === 1 ? undefined : params.user_id,
        detachUserId: params.detach === 1 ? params.user_id : undefined,
      });
      return 'success';
    },
  });

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

  // ----- chats -----
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

  // ----- sentences -----
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

  // ----- prompt -----
  defineRoute(app, {
    method: 'POST',
    url: '/aichat.php',
    auth: 'session',
    summary:
      "Send a prompt (words, or a JSON array of {role, content}) to your client's provider; data is the reply text, or with tokens=1 the prompt's token count. Accept: text/event-stream streams the reply",
    params: z.object({
      tz: p.tz(),
      prompt: p.string(200_000),
      max_tokens: p.int().refine((n) => n >= 1, { error: 'must be a positive number of tokens' }).default(DEFAULT_PROMPT_MAX_TOKENS),
      tokens: p.flag().default(0),
    }),
    reply: PromptReply,
    stream: PromptStream,
    async handler({ params, caller, request, reply }) {
      const prompt = parsePrompt(params.prompt);
      if (params.tokens === 1) return services.prompts.countTokens(prompt);
      if (/\btext\/event-stream\b/i.test(request.headers.accept ?? '')) {
        // The stream has taken over the reply: nothing of this value is sent.
        return (await streamPrompt(services, caller, request, reply, prompt, params.max_tokens)) ?? '';
      }
      return (await services.prompts.complete(caller, prompt, params.max_tokens)).text;
    },
  });
}
